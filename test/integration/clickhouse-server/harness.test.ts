import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseServers, stopClickHouseServerPid, type ClickHouseServer } from '../../helpers/clickhouse-server/clickhouse-server.js';

// The server harness itself: two real server processes made from the engine library, as the
// `server` test project and the fault tests use them.
let servers: ClickHouseServer[];
const clients: ClickHouseClient[] = [];

const connect = (server: ClickHouseServer, password = server.password) => {
  const client = createClient({ url: server.url, username: server.user, password, request_timeout: 10_000 });
  clients.push(client);
  return client;
};
const rows = async <T>(client: ClickHouseClient, query: string, query_params: Record<string, unknown> = {}) =>
  (await client.query({ query, query_params, format: 'JSONEachRow' })).json<T>();

beforeAll(async () => {
  servers = await startClickHouseServers(2);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await Promise.all(servers?.map((s) => s.stop()) ?? []);
});

describe('ClickHouse server harness', () => {
  it('starts each server as its own process on its own ports, with a password-protected user', async () => {
    const [a, b] = servers;
    expect(a.pid).toBeGreaterThan(0);
    expect(b.pid).not.toBe(a.pid);
    expect(new Set([a.httpPort, a.tcpPort, b.httpPort, b.tcpPort]).size).toBe(4);
    expect(await rows(connect(a), 'SELECT currentUser() AS user, getMacro({m:String}) AS shard', { m: 'shard' })).toEqual([{ user: a.user, shard: '1' }]);
    expect(await rows(connect(b), 'SELECT getMacro(\'shard\') AS shard')).toEqual([{ shard: '2' }]);
    await expect(rows(connect(a, 'wrong'), 'SELECT 1')).rejects.toThrow(/Authentication failed/);
  });

  it('names both servers as shards of one cluster, and a Distributed table spans them', async () => {
    const [a, b] = servers;
    for (const server of servers) {
      await connect(server).command({ query: 'CREATE TABLE IF NOT EXISTS default.h_local (k UInt64) ENGINE = MergeTree ORDER BY k' });
      await connect(server).command({ query: 'CREATE TABLE IF NOT EXISTS default.h AS default.h_local ENGINE = Distributed(lookout_test, default, h_local, k)' });
    }
    await connect(a).insert({ table: 'default.h', values: Array.from({ length: 100 }, (_, k) => ({ k })), format: 'JSONEachRow', clickhouse_settings: { distributed_foreground_insert: 1 } });
    const local = async (server: ClickHouseServer) => Number((await rows<{ n: string }>(connect(server), 'SELECT count() AS n FROM default.h_local'))[0].n);
    const [onA, onB] = [await local(a), await local(b)];
    expect(onA).toBeGreaterThan(0);
    expect(onB).toBeGreaterThan(0);
    expect(onA + onB).toBe(100);
    expect(Number((await rows<{ n: string }>(connect(b), 'SELECT count() AS n FROM default.h'))[0].n)).toBe(100);
  });

  it('freezes and thaws a server, kills it, and starts it again on the same data', async () => {
    const [a] = servers;
    await connect(a).command({ query: 'CREATE TABLE IF NOT EXISTS default.kept (k UInt8) ENGINE = MergeTree ORDER BY k' });
    await connect(a).insert({ table: 'default.kept', values: [{ k: 7 }], format: 'JSONEachRow' });
    a.freeze();
    expect(await a.ping()).toBe(false);
    a.thaw();
    expect(await a.ping()).toBe(true);
    const pid = a.pid;
    await a.kill();
    expect(a.pid).toBeNull();
    expect(await a.ping()).toBe(false);
    await a.start();
    expect(a.pid).not.toBe(pid);
    expect(await rows(connect(a), 'SELECT k FROM default.kept')).toEqual([{ k: 7 }]);
  });

  it('stops a server by its process id', async () => {
    const [, b] = servers;
    await stopClickHouseServerPid(b.pid!);
    expect(await b.ping()).toBe(false);
    await b.start();
    expect(await b.ping()).toBe(true);
  });
});
