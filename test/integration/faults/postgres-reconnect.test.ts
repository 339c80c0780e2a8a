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

  /** `swallow`: a chunk from the client it matches never reaches the server (as if the server froze then). */
  constructor(
    private readonly target: number,
    private readonly swallow: (chunk: Buffer) => boolean = () => false,
  ) {}

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
      client.on('data', (chunk: Buffer) => {
        if (!this.swallow(chunk)) upstream.write(chunk);
      });
      client.on('end', () => upstream.end());
      upstream.pipe(client);
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

describe('a pool ended while a new connection reads the server\'s array types', () => {
  it('fails the waiting query and does not end the process with an unhandled rejection', async () => {
    // postgres.js reads the array types as the first statement of every new connection and
    // discards that statement's promise, so its failure (here: the pool ended with the server not
    // answering, as at shutdown with PostgreSQL frozen) was an unhandled rejection, which ends a
    // Node process; patches/ adds the handler.
    const silent = new Relay(Number(new URL(pg.url).port), (chunk) => chunk.includes('pg_catalog.pg_type'));
    const port = await silent.open();
    const unhandled: unknown[] = [];
    const collect = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', collect);
    try {
      const stuck = connectPostgres(`postgres://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`, { max: 1 });
      const waiting = stuck`select 1 as one`.then(
        () => 'answered',
        (e: { code?: string }) => e.code,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      await stuck.end({ timeout: 0.2 });
      expect(await waiting).toBe('CONNECTION_DESTROYED');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', collect);
      await silent.close();
    }
  }, 60_000);
});
