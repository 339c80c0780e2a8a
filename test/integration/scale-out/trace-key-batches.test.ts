import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { claimDue, finishClaims, heldClaims, recordTraces, type QueueRecord } from '../../../src/ingest/settle/settle-queue.js';
import { traceKeyString, type TraceKey } from '../../../src/spans/stored-spans.js';
import { registerTraces, REGISTRY_COMPLETE_STATE } from '../../../src/ingest/settle/stored-traces.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { migratePostgres } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { removeDir } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * A flush's or a round's trace keys as PostgreSQL parameters (src/spans/trace-key-params.ts): each
 * (tenant, project) pair sent once, each trace answered by its position. On a real PostgreSQL: keys of
 * several tenants and projects in one statement each get their own answer; two spellings of one key
 * (letter case) are one row and both are answered; a key that is not a UUID is never claimed and
 * fails no statement.
 */

const dataDir = tempDataDir('lookout-key-batches-');
let pg: PostgresStore;
beforeAll(async () => {
  // From the run's migrated template (test/helpers/migrated-stores.ts): the migration below finds nothing left to apply.
  await copyMigratedStores(dataDir, { postgres: true, clickhouse: false });
  pg = await openPostgres({ databaseUrl: null, dataDir });
  await migratePostgres(pg.sql, path.join(projectRoot, 'sql'));
  await pg.sql`insert into shared_state (name, value) values (${REGISTRY_COMPLETE_STATE}, '{}')`;
}, 120_000);
afterAll(async () => {
  await pg?.close();
  removeDir(dataDir);
});

const timing = { settleMs: 0, maxWaitMs: 60_000 };
const origin = (apiKey: string) => ({ actor: 'sdk', surface: 'otlp', user_id: 'u1', api_key_id: apiKey });
const upper = (k: TraceKey): TraceKey => ({ tenantId: k.tenantId.toUpperCase(), projectId: k.projectId.toUpperCase(), traceId: k.traceId.toUpperCase() });

/** Keys over two tenants and three projects, interleaved as requests of one flush would bring them. */
function mixedKeys(perPair: number): TraceKey[] {
  const [t1, t2] = [crypto.randomUUID(), crypto.randomUUID()];
  const pairs = [
    [t1, crypto.randomUUID()],
    [t2, crypto.randomUUID()],
    [t1, crypto.randomUUID()],
  ];
  const keys: TraceKey[] = [];
  for (let i = 0; i < perPair; i++) for (const [tenantId, projectId] of pairs) keys.push({ tenantId, projectId, traceId: crypto.randomUUID() });
  return keys;
}

describe('trace keys of several tenants and projects in one statement', () => {
  it('registers, records, claims and finishes each key as its own trace', async () => {
    const keys = mixedKeys(4);
    // One trace already known (a second registration), the rest new.
    await registerTraces(pg.sql, [keys[5]]);
    const registration = await registerTraces(pg.sql, keys);
    expect(registration.complete).toBe(true);
    expect(registration.created).toEqual(new Set(keys.filter((_, i) => i !== 5).map(traceKeyString)));
    for (const [i, k] of keys.entries()) expect(registration.registrations.get(traceKeyString(k))).toBe(i === 5 ? 2 : 1);
    const stored = await pg.sql<{ tenant_id: string; project_id: string; trace_id: string; registrations: string }[]>`
      select tenant_id, project_id, trace_id, registrations::text from stored_traces where trace_id = any(${keys.map((k) => k.traceId)}::uuid[])`;
    expect(new Set(stored.map((r) => traceKeyString({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id })))).toEqual(new Set(keys.map(traceKeyString)));

    // Each record keeps its own root and sender; every trace is answered with its own queue row.
    const records: QueueRecord[] = keys.map((k, i) => ({ ...k, hasRoot: i % 2 === 0, origin: origin(`key-${i % 3}`) }));
    const recorded = await recordTraces(pg.sql, records, timing);
    expect(recorded.map(traceKeyString).sort()).toEqual(keys.map(traceKeyString).sort());
    expect(new Set(recorded.map((r) => r.rowId)).size).toBe(keys.length);
    for (const r of recorded) expect(r.registrations).toBe(r.traceId === keys[5].traceId ? 2 : 1);
    const rows = await pg.sql<{ trace_id: string; has_root: boolean; api_key_id: string; row_id: string }[]>`
      select trace_id, has_root, api_key_id, row_id::text from settle_queue where trace_id = any(${keys.map((k) => k.traceId)}::uuid[])`;
    for (const [i, k] of keys.entries()) {
      const row = rows.find((r) => r.trace_id === k.traceId)!;
      expect(row).toMatchObject({ has_root: i % 2 === 0, api_key_id: `key-${i % 3}` });
      expect(recorded.find((r) => r.traceId === k.traceId)!.rowId).toBe(row.row_id);
    }

    const token = crypto.randomUUID();
    const round = await claimDue(pg.sql, { token, limit: 100, leaseMs: 60_000, keys: keys.slice(0, 7) });
    expect(round.claims.map(traceKeyString).sort()).toEqual(keys.slice(0, 7).map(traceKeyString).sort());
    expect(await heldClaims(pg.sql, token, round.claims)).toEqual(new Set(keys.slice(0, 7).map(traceKeyString)));
    // A span of one of them arrives meanwhile: that one is freed, the others finish.
    await recordTraces(pg.sql, [records[3]], timing);
    const finished = await finishClaims(pg.sql, token, round.claims);
    expect(finished.map(traceKeyString).sort()).toEqual(keys.slice(0, 7).filter((_, i) => i !== 3).map(traceKeyString).sort());
    const left = await pg.sql<{ trace_id: string; claim_token: string | null; claimed_seq: string | null }[]>`
      select trace_id, claim_token, claimed_seq::text from settle_queue where trace_id = any(${keys.slice(0, 7).map((k) => k.traceId)}::uuid[])`;
    expect(left).toEqual([{ trace_id: keys[3].traceId, claim_token: null, claimed_seq: null }]);
  });
});

describe('two spellings of one key', () => {
  it('are one registry row and one queue row, and every spelling is answered', async () => {
    const [key] = mixedKeys(1);
    const shouted = upper(key);
    const registration = await registerTraces(pg.sql, [shouted, key, shouted]);
    expect(registration.created).toEqual(new Set([traceKeyString(key), traceKeyString(shouted)]));
    expect(registration.registrations).toEqual(new Map([[traceKeyString(shouted), 1], [traceKeyString(key), 1]]));
    const again = await registerTraces(pg.sql, [shouted]);
    expect(again.created).toEqual(new Set());
    expect(again.registrations).toEqual(new Map([[traceKeyString(shouted), 2]]));

    // Roots OR-ed over the spellings, the last sender kept.
    const recorded = await recordTraces(pg.sql, [{ ...key, hasRoot: true, origin: origin('first') }, { ...shouted, hasRoot: false, origin: origin('last') }], timing);
    expect(recorded.map(traceKeyString)).toEqual([traceKeyString(key), traceKeyString(shouted)]);
    expect(recorded[0].rowId).toBe(recorded[1].rowId);
    expect(recorded.map((r) => r.registrations)).toEqual([2, 2]);
    const rows = await pg.sql<{ has_root: boolean; api_key_id: string; seq: string }[]>`
      select has_root, api_key_id, seq::text from settle_queue where trace_id = ${key.traceId}::uuid`;
    expect(rows).toEqual([{ has_root: true, api_key_id: 'last', seq: '1' }]);

    const round = await claimDue(pg.sql, { token: crypto.randomUUID(), limit: 10, leaseMs: 60_000, keys: [shouted] });
    expect(round.claims.map(traceKeyString)).toEqual([traceKeyString(key)]);
  });
});

describe('a key that is not a UUID', () => {
  it('is never claimed, and asking for it fails no statement', async () => {
    const [key] = mixedKeys(1);
    await registerTraces(pg.sql, [key]);
    const foreign = { tenantId: key.tenantId, projectId: 'not-a-uuid', traceId: 'trace-1' };
    expect(await claimDue(pg.sql, { token: crypto.randomUUID(), limit: 10, leaseMs: 60_000, keys: [foreign] })).toEqual({ claims: [], versionMs: 0 });
  });
});
