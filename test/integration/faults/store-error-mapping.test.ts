import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../../src/platform/clickhouse/clickhouse.js';
import { sql as chSql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { StoreUnavailableError } from '../../../src/platform/http/errors.js';
import { connectPostgres } from '../../../src/platform/postgres/postgres.js';
import { storeUnavailable } from '../../../src/platform/store-errors.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * One mapping of store failures, per store and error class, with the real clients meeting real
 * failures: nothing listening (refused), a peer that accepts and cuts the connection (reset), a
 * peer that accepts and never answers (timeout), PostgreSQL out of connections for a role, and
 * PostgreSQL's statement_timeout. Each becomes 503 store_unavailable naming its store; a plain
 * SQL error stays what it is.
 */

let svc: TestService;
const servers: net.Server[] = [];

/** A TCP peer on a free port: `silent` accepts and never answers; `reset` accepts and destroys the socket. */
async function peer(kind: 'silent' | 'reset'): Promise<number> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    if (kind === 'reset') socket.resetAndDestroy();
    else sockets.push(socket);
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function failure(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function expectUnavailable(error: unknown, store: 'postgres' | 'clickhouse'): void {
  const mapped = storeUnavailable(error);
  expect(mapped, String(error)).toBeInstanceOf(StoreUnavailableError);
  expect(mapped!.status).toBe(503);
  expect(mapped!.code).toBe('store_unavailable');
  expect(Number(mapped!.headers['Retry-After'])).toBeGreaterThan(0);
  expect(mapped!.store).toBe(store);
}

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  for (const server of servers) server.close();
  await svc?.stop();
});

describe('PostgreSQL failures → 503 store_unavailable', () => {
  const pgUrl = (port: number) => `postgres://postgres:x@127.0.0.1:${port}/postgres`;

  it('connection refused', async () => {
    const sql = connectPostgres(pgUrl(await closedPort()), { max: 1 });
    expectUnavailable(await failure(() => sql`select 1`), 'postgres');
    await sql.end({ timeout: 0 });
  });

  it('connection reset', async () => {
    const sql = connectPostgres(pgUrl(await peer('reset')), { max: 1 });
    expectUnavailable(await failure(() => sql`select 1`), 'postgres');
    await sql.end({ timeout: 0 });
  });

  it('connection timeout (a server that accepts and never answers)', async () => {
    const sql = connectPostgres(pgUrl(await peer('silent')), { max: 1 });
    const started = Date.now();
    expectUnavailable(await failure(() => sql`select 1`), 'postgres');
    // connect_timeout is 5 s; generous for a loaded runner.
    expect(Date.now() - started).toBeLessThan(20_000);
    await sql.end({ timeout: 0 });
  });

  it('too many connections (SQLSTATE 53300)', async () => {
    const admin = svc.postgresPool({ max: 1 });
    await admin.unsafe(`drop role if exists lookout_no_connections`);
    await admin.unsafe(`create role lookout_no_connections login password 'pw' connection limit 0`);
    const url = new URL(svc.postgresUrl());
    url.username = 'lookout_no_connections';
    url.password = 'pw';
    const sql = connectPostgres(url.toString(), { max: 1 });
    const error = await failure(() => sql`select 1`);
    expect((error as { code?: string }).code).toBe('53300');
    expectUnavailable(error, 'postgres');
    await sql.end({ timeout: 0 });
  });

  it('statement timeout (SQLSTATE 57014)', async () => {
    const sql = connectPostgres(svc.postgresUrl(), { max: 1, statementTimeoutMs: 200 });
    const error = await failure(() => sql`select pg_sleep(5)`);
    expect((error as { code?: string }).code).toBe('57014');
    expectUnavailable(error, 'postgres');
    await sql.end({ timeout: 1 });
  });

  it('a plain SQL error is not a store failure', async () => {
    const sql = svc.postgresPool({ max: 1 });
    expect(storeUnavailable(await failure(() => sql`select * from no_such_table`))).toBeNull();
  });
});

describe('ClickHouse server failures → 503 store_unavailable (through the SQL layer)', () => {
  /** A store on a server URL, as openClickHouse builds it; its first statement (CREATE DATABASE) fails on these peers. */
  async function serverStore(port: number) {
    return openClickHouse({
      url: `http://127.0.0.1:${port}`,
      user: 'default',
      password: '',
      database: 'lookout',
      cluster: null,
      dataDir: tempDataDir(),
      requestTimeoutsMs: { system: 1_000, ingest: 1_000, read: 1_000, probe: 500 },
    });
  }

  it('connection refused, reset and timeout at start-up: the store does not open, and says ClickHouse is unavailable', async () => {
    for (const port of [await closedPort(), await peer('reset'), await peer('silent')]) {
      expectUnavailable(await failure(() => serverStore(port)), 'clickhouse');
    }
  });

  it('connection refused, reset and timeout of a statement: labelled ClickHouse unavailable', async () => {
    const { clickhouseUnavailable } = await import('../../../src/platform/store-errors.js');
    for (const port of [await closedPort(), await peer('reset'), await peer('silent')]) {
      const { createClient } = await import('@clickhouse/client');
      const client = createClient({ url: `http://127.0.0.1:${port}`, request_timeout: 1_000 });
      const error = await failure(() => client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json()));
      const labelled = clickhouseUnavailable(error);
      expect(labelled, String(error)).toBeInstanceOf(StoreUnavailableError);
      expectUnavailable(labelled, 'clickhouse');
      await client.close();
    }
  });

  it('a plain SQL error on ClickHouse is not a store failure', async () => {
    const ch = svc.service.deps.ch;
    const error = await failure(() => ch.read(chSql`SELECT no_such_column FROM system.one`, { lane: 'system' }));
    expect(storeUnavailable(error)).toBeNull();
  });
});

describe('keys verified recently stay verifiable while PostgreSQL is away', () => {
  const request = (key: string) => ({ headers: { authorization: `Bearer ${key}` } }) as unknown as import('express').Request;

  it('within KEY_CACHE_SECONDS a seen key verifies; an unseen key, or one past the bound, is 503', async () => {
    const { authenticate } = await import('../../../src/tenancy/auth.js');
    const readKey = await svc.newKey('read');
    // A pool of its own, ended below: every later statement on it fails as PostgreSQL unavailable.
    const sql = connectPostgres(svc.postgresUrl(), { max: 1 });
    const seen = await authenticate(sql, request(readKey), 60);
    expect(seen.scope).toBe('read');
    expect((await authenticate(sql, request(svc.adminKey), 0.5)).scope).toBe('admin');
    await sql.end({ timeout: 1 });

    expect(await authenticate(sql, request(readKey), 60)).toEqual(seen);
    expectUnavailable(await failure(() => authenticate(sql, request(svc.adminKey.replace(/.$/, 'x')), 60)), 'postgres');
    // Past its bound (0.5 s here) a key is no longer trusted.
    await new Promise((r) => setTimeout(r, 700));
    expectUnavailable(await failure(() => authenticate(sql, request(svc.adminKey), 0.5)), 'postgres');
  });

  it('a revocation PostgreSQL answers takes effect at once and is not undone by the cache', async () => {
    const { authenticate } = await import('../../../src/tenancy/auth.js');
    const created = await svc.call('POST', '/api-keys', { body: { name: 'to revoke', scope: 'read', project_id: null } });
    expect(created.status).toBe(201);
    const sql = connectPostgres(svc.postgresUrl(), { max: 1 });
    expect((await authenticate(sql, request(created.body.key), 60)).keyId).toBe(created.body.id);
    expect((await svc.call('DELETE', `/api-keys/${created.body.id}`)).status).toBe(204);
    const revoked = await failure(() => authenticate(sql, request(created.body.key), 60));
    expect((revoked as { status?: number }).status).toBe(401);
    await sql.end({ timeout: 1 });
    // PostgreSQL away now: the revoked key is not in the cache any more.
    expectUnavailable(await failure(() => authenticate(sql, request(created.body.key), 60)), 'postgres');
  });
});
