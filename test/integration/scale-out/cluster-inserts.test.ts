import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../../src/platform/clickhouse/clickhouse.js';

// "A 200 means the spans are durable" on a cluster: every insert must reach its shard before it
// returns (distributed_foreground_insert) and, with replicas, a quorum of them. No ClickHouse server
// runs here, so a stand-in on ClickHouse's HTTP interface records what the client sends: ClickHouse
// reads per-request settings from the URL's query string.
const requests: { url: URL; body: string }[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      requests.push({ url: new URL(req.url ?? '/', 'http://stand-in'), body });
      res.setHeader('X-ClickHouse-Summary', '{}');
      res.end('');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const insertOf = (table: string) => requests.find((r) => (r.url.searchParams.get('query') ?? '').startsWith(`INSERT INTO ${table}`));

describe('inserts on a cluster', () => {
  it('carry foreground delivery and the configured quorum; a call\'s own settings win', async () => {
    const store = await openClickHouse({ url, user: 'u', password: 'p', database: 'lookout', cluster: 'c1', insertQuorum: 'auto', dataDir: '/nonexistent' });
    try {
      expect(requests[0].body).toBe('CREATE DATABASE IF NOT EXISTS `lookout` ON CLUSTER `c1`');
      await store.client.insert({ table: store.table('spans'), values: [{ trace_id: 't' }], format: 'JSONEachRow' });
      const spans = insertOf('`lookout`.`spans`')!.url.searchParams;
      expect([spans.get('distributed_foreground_insert'), spans.get('insert_quorum'), spans.get('insert_quorum_parallel')]).toEqual(['1', 'auto', '1']);
      await store.client.insert({ table: store.table('traces'), values: [{ trace_id: 't' }], format: 'JSONEachRow', clickhouse_settings: { insert_quorum: '2' } });
      expect(insertOf('`lookout`.`traces`')!.url.searchParams.get('insert_quorum')).toBe('2');
    } finally {
      await store.close();
    }
  });

  it('send no quorum when CLICKHOUSE_INSERT_QUORUM is 0, and no cluster settings without a cluster', async () => {
    const quorumless = await openClickHouse({ url, user: 'u', password: 'p', database: 'q0', cluster: 'c1', insertQuorum: '0', dataDir: '/nonexistent' });
    await quorumless.client.insert({ table: quorumless.table('spans'), values: [{ trace_id: 't' }], format: 'JSONEachRow' });
    await quorumless.close();
    const q0 = insertOf('`q0`.`spans`')!.url.searchParams;
    expect([q0.get('distributed_foreground_insert'), q0.get('insert_quorum')]).toEqual(['1', null]);

    const single = await openClickHouse({ url, user: 'u', password: 'p', database: 'one', cluster: null, dataDir: '/nonexistent' });
    await single.client.insert({ table: single.table('spans'), values: [{ trace_id: 't' }], format: 'JSONEachRow' });
    await single.close();
    const one = insertOf('`one`.`spans`')!.url.searchParams;
    expect([one.get('distributed_foreground_insert'), one.get('insert_quorum')]).toEqual([null, null]);
  });
});
