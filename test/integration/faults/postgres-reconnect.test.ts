import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDED_PASSWORD } from '../../../src/platform/postgres/embedded-supervisor.js';
import { connectPostgres, openPostgres, type PostgresStore, type Sql } from '../../../src/platform/postgres/postgres.js';
import { timed } from '../../helpers/fault-probes.js';
import { removeDir } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * The service's PostgreSQL pool through an outage that fails every one of its connections (the
 * server killed and restarted under load). A query is bound to a connection that waits out its
 * back-off before the attempt, so that back-off is how long a query issued during the outage can
 * hold its caller (the writer's flush, which others queue behind) after the server is back. It
 * stays under about a second, not postgres.js's default of up to 20 s (which grows with every
 * failed attempt of any connection of the pool). The server sits behind a TCP relay the test opens
 * and closes, so the outage is exact; the bounds are generous for a loaded runner, and the default
 * back-off cannot meet the first (the tenth connection to fail waits at least 10 s).
 */

/** A TCP relay on a fixed local port to PostgreSQL: closed, it refuses connections and cuts those it carried. */
class Relay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly target: number) {}

  async open(port = 0): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return (server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let dataDir: string;
let pg: PostgresStore;
let relay: Relay;
let pool: Sql | null = null;

beforeAll(async () => {
  dataDir = tempDataDir();
  pg = await openPostgres({ databaseUrl: null, dataDir });
  relay = new Relay(Number(new URL(pg.url).port));
}, 120_000);

afterAll(async () => {
  await pool?.end({ timeout: 1 }).catch(() => {});
  await relay?.close();
  await pg?.close();
  removeDir(dataDir);
});

describe('the PostgreSQL pool during and after an outage', () => {
  it('tries each connection again within about a second, however often it failed, and answers soon after the server returns', async () => {
    const port = await relay.open();
    // The service's pool, as connectPostgres configures it (ten connections).
    pool = connectPostgres(`postgres://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`, { max: 10 });
    expect((await pool`select 1 as one`)[0]).toEqual({ one: 1 });

    await relay.close();
    // Ten requests at once meet the outage: each connection of the pool tries and is refused.
    const burst = await Promise.allSettled(Array.from({ length: 10 }, () => pool!`select 1 as one`));
    expect(burst.map((r) => r.status)).toEqual(Array(10).fill('rejected'));
    // Then one request after another, as a writer retries: each waits for its connection's back-off
    // before its attempt. The pool's tenth failure set a back-off of at least 10 s with postgres.js's
    // default; here none is over a second, so ten in a row take a few seconds at most.
    const inTurn = await timed(async () => {
      for (let i = 0; i < 10; i++) await expect(pool!`select 1 as one`).rejects.toThrow();
    });
    expect(inTurn.ms).toBeLessThan(8_000);

    await relay.open(port);
    const back = await timed(() => pool!`select 1 as one`);
    expect(back.value[0]).toEqual({ one: 1 });
    expect(back.ms).toBeLessThan(5_000);
  }, 120_000);
});
