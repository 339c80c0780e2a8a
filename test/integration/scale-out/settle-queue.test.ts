import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import path from 'node:path';
import { claimDue, extendLease, finishClaims, heldClaims, queueDepth, recordTraces, releaseClaims, type QueueRecord } from '../../../src/ingest/settle/settle-queue.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { migratePostgres } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore, type Sql } from '../../../src/platform/postgres/postgres.js';
import { traceKeyString } from '../../../src/spans/stored-spans.js';
import { removeDir } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { sleep } from './instances.js';

/**
 * The settle queue's rules on a real PostgreSQL (src/ingest/settle/settle-queue.ts): two settlers never
 * claim one trace, a claim finishes only when no newer span was recorded, an abandoned lease
 * frees the trace, versions grow with every claim.
 */

const dataDir = tempDataDir('lookout-queue-');
let pg: PostgresStore;
let other: Sql;
beforeAll(async () => {
  // From the run's migrated template (test/helpers/migrated-stores.ts): the migration below finds nothing left to apply.
  await copyMigratedStores(dataDir, { postgres: true, clickhouse: false });
  pg = await openPostgres({ databaseUrl: null, dataDir });
  await migratePostgres(pg.sql, path.join(projectRoot, 'sql'));
  // A second pool: another process's settler.
  other = postgres(pg.url, { max: 2, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  await other?.end({ timeout: 5 });
  await pg?.close();
  removeDir(dataDir);
});

const origin = { actor: 'sdk', surface: 'otlp', user_id: 'u1', api_key_id: 'k1' };
// Keys are UUIDs (sql/023); tests name their traces, `id` gives each name its UUID and `name` reads it back.
const tenantId = crypto.randomUUID();
const projectId = crypto.randomUUID();
const ids = new Map<string, string>();
const id = (traceName: string) => ids.get(traceName) ?? ids.set(traceName, crypto.randomUUID()).get(traceName)!;
const name = (traceId: string) => [...ids].find(([, v]) => v === traceId)?.[0] ?? traceId;
const key = (traceName: string) => ({ tenantId, projectId, traceId: id(traceName) });
const rec = (traceName: string, hasRoot = true): QueueRecord => ({ ...key(traceName), hasRoot, origin });
const now = { settleMs: 0, maxWaitMs: 60_000 };

describe('settle queue', () => {
  it('gives each due trace to one settler, with growing versions and the sender kept', async () => {
    await recordTraces(pg.sql, ['a1', 'a2', 'a3', 'a4'].map((t) => rec(t)), now);
    // Rootless and recent: not due until the maximum wait.
    await recordTraces(pg.sql, [rec('a5', false)], now);
    const [first, second] = await Promise.all([
      claimDue(pg.sql, { token: crypto.randomUUID(), limit: 2, leaseMs: 60_000 }),
      claimDue(other, { token: crypto.randomUUID(), limit: 2, leaseMs: 60_000 }),
    ]);
    const claimed = [...first.claims, ...second.claims].map((c) => name(c.traceId)).sort();
    expect(claimed).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(first.versionMs).not.toBe(second.versionMs);
    expect(first.claims[0].origin).toEqual(origin);
    const third = await claimDue(pg.sql, { token: crypto.randomUUID(), limit: 10, leaseMs: 60_000 });
    expect(third.claims).toEqual([]);
  });

  it('finishes a claim only if no span was recorded after it, and frees the trace otherwise', async () => {
    await recordTraces(pg.sql, [rec('b1'), rec('b2')], now);
    const token = crypto.randomUUID();
    const round = await claimDue(pg.sql, { token, limit: 10, leaseMs: 60_000, keys: [key('b1'), key('b2')] });
    expect(round.claims.map((c) => name(c.traceId)).sort()).toEqual(['b1', 'b2']);
    // A span of b2 arrives while it is being settled (from another process: a claimed row is not locked).
    await recordTraces(other, [{ ...rec('b2'), origin: { ...origin, api_key_id: 'k2' } }], now);
    const finished = await finishClaims(pg.sql, token, round.claims);
    expect(finished.map((k) => name(k.traceId))).toEqual(['b1']);
    const again = await claimDue(pg.sql, { token: crypto.randomUUID(), limit: 10, leaseMs: 60_000, keys: [key('b2')] });
    expect(again.claims).toHaveLength(1);
    expect(again.claims[0].origin.api_key_id).toBe('k2');
    expect(again.versionMs).toBeGreaterThan(round.versionMs);
  });

  it("frees an abandoned claim when its lease runs out, and not before; a renewed lease holds", async () => {
    await recordTraces(pg.sql, [rec('c1'), rec('c2')], now);
    const keys = (traceName: string) => [key(traceName)];
    const abandonedToken = crypto.randomUUID();
    const abandoned = await claimDue(pg.sql, { token: abandonedToken, limit: 10, leaseMs: 3000, keys: keys('c1') });
    const renewedToken = crypto.randomUUID();
    const renewed = await claimDue(pg.sql, { token: renewedToken, limit: 10, leaseMs: 3000, keys: keys('c2') });
    expect(abandoned.claims).toHaveLength(1);
    expect(renewed.claims).toHaveLength(1);
    expect((await claimDue(other, { token: crypto.randomUUID(), limit: 10, leaseMs: 3000, keys: keys('c1') })).claims).toEqual([]);
    // Renewed well within its lease, for longer than the lease: c2 stays claimed, c1 does not.
    for (let i = 0; i < 8; i++) {
      await sleep(500);
      await extendLease(pg.sql, renewedToken, 3000);
    }
    // c1's lease ran out (no renewal): another settler takes it; its finish counts, the old one's does not.
    const takeover = crypto.randomUUID();
    const taken = await claimDue(other, { token: takeover, limit: 10, leaseMs: 60_000, keys: [...keys('c1'), ...keys('c2')] });
    expect(taken.claims.map((c) => name(c.traceId))).toEqual(['c1']);
    // The stalled round sees it lost c1 (it skips c1's hooks); the renewed one still holds c2.
    expect(await heldClaims(pg.sql, abandonedToken, abandoned.claims)).toEqual(new Set());
    expect(await heldClaims(pg.sql, renewedToken, renewed.claims)).toEqual(new Set([traceKeyString(key('c2'))]));
    expect(await finishClaims(pg.sql, crypto.randomUUID(), abandoned.claims)).toEqual([]);
    expect((await finishClaims(other, takeover, taken.claims)).map((k) => name(k.traceId))).toEqual(['c1']);
    expect((await finishClaims(pg.sql, renewedToken, renewed.claims)).map((k) => name(k.traceId))).toEqual(['c2']);
  });

  it('renews and releases a lease beside a flush upserting the same rows in key order, without a deadlock', async () => {
    // Two claimed rows whose heap order is the reverse of their key order: an update that locks the
    // token's rows as it finds them takes the later key first, while a flush locks in key order.
    await recordTraces(pg.sql, [rec('e1'), rec('e2')], now);
    const token = crypto.randomUUID();
    const round = await claimDue(pg.sql, { token, limit: 10, leaseMs: 60_000, keys: [key('e1'), key('e2')] });
    expect(round.claims).toHaveLength(2);
    const [low, high] = ['e1', 'e2'].sort((a, b) => (id(a) < id(b) ? -1 : 1));
    const heapOrder = async () => {
      const rows = await pg.sql<{ trace_id: string }[]>`select trace_id::text from settle_queue where claim_token = ${token} order by ctid`;
      return rows.map((r) => name(r.trace_id));
    };
    // Unclaiming and reclaiming a row writes a new version further on in the heap, with a new entry in
    // the claim-token index (a change of an indexed column is never a same-page HOT update).
    for (let i = 0; i < 20 && (await heapOrder())[0] !== high; i++) {
      await pg.sql`update settle_queue set claim_token = null where trace_id = ${id(low)}::uuid`;
      await pg.sql`update settle_queue set claim_token = ${token} where trace_id = ${id(low)}::uuid`;
    }
    expect(await heapOrder()).toEqual([high, low]);

    for (const renew of [() => extendLease(pg.sql, token, 60_000), () => releaseClaims(pg.sql, token)]) {
      // The flush holds the lower key's row and, a moment later, upserts the higher one.
      let renewal: Promise<unknown> | undefined;
      await other.begin(async (tx) => {
        await recordTraces(tx, [rec(low)], now);
        renewal = renew().then(() => null, (error: unknown) => error);
        await sleep(300);
        await recordTraces(tx, [rec(high)], now);
      });
      expect(await renewal).toBeNull();
    }
    // Released: both rows are free to claim again, and settle.
    const again = crypto.randomUUID();
    const next = await claimDue(pg.sql, { token: again, limit: 10, leaseMs: 60_000, keys: [key('e1'), key('e2')] });
    expect((await finishClaims(pg.sql, again, next.claims)).map((k) => name(k.traceId)).sort()).toEqual(['e1', 'e2']);
  });

  it('makes a rooted trace due after the quiet period and a rootless one only after the maximum wait', async () => {
    const timing = { settleMs: 400, maxWaitMs: 1500 };
    await recordTraces(pg.sql, [rec('d1', true), rec('d2', false)], timing);
    const before = await queueDepth(pg.sql);
    const dueIds = async () => {
      const token = crypto.randomUUID();
      const round = await claimDue(pg.sql, { token, limit: 100, leaseMs: 60_000 });
      await finishClaims(pg.sql, token, round.claims);
      return round.claims.map((c) => name(c.traceId)).filter((n) => n.startsWith('d'));
    };
    expect(await dueIds()).toEqual([]);
    await sleep(600);
    expect(await dueIds()).toEqual(['d1']);
    await sleep(1100);
    expect(await dueIds()).toEqual(['d2']);
    expect(await queueDepth(pg.sql)).toBe(before - 2);
  });
});
