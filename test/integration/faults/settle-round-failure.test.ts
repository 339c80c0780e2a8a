import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import type { Sql } from '../../../src/platform/postgres/postgres.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { sleep, until } from '../../helpers/fault-probes.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';

/**
 * Settle rounds that fail, and claims PostgreSQL refuses to end, with a claim lease of two minutes
 * (docs/settling.md): once the faults are gone, the traces are settled, or their claims finished,
 * well before the lease would have run out. The faults are real statement failures: ClickHouse
 * refuses the round's last insert (its table renamed away, after the round's other inserts landed),
 * and PostgreSQL refuses, by a trigger, every statement that ends a claim (a release or a finish).
 * Meanwhile the settler backs off instead of retrying at its tick rate. Each trace's hooks run once.
 */

const LEASE_MS = 120_000;
let svc: TestService;
let sql: Sql;
const hookRuns = new Map<string, number>();

beforeAll(async () => {
  svc = await startTestService({ SETTLE_LEASE_MS: String(LEASE_MS), TRACE_MAX_WAIT_MS: '30000' });
  sql = svc.postgresPool({ max: 2 });
  traceHooks(svc.service.deps).onTracesProcessed.push(async (traces) => {
    for (const t of traces) hookRuns.set(t.traceId, (hookRuns.get(t.traceId) ?? 0) + 1);
  });
});

afterAll(async () => {
  await allowClaimEnds().catch(() => {});
  await svc?.stop();
  removeDir(svc?.dataDir);
});

const ch = () => svc.service.deps.ch;

/** PostgreSQL refuses every statement that ends a claim: a release (token cleared) or a finish (row deleted). */
async function refuseClaimEnds(): Promise<void> {
  await sql.unsafe(`create or replace function test_refuse_claim_end() returns trigger language plpgsql as $$
    begin raise exception 'test fault: a settle claim cannot end now'; end $$`);
  await sql.unsafe(`create trigger test_refuse_release before update on settle_queue for each row
    when (old.claim_token is not null and new.claim_token is null) execute function test_refuse_claim_end()`);
  await sql.unsafe('create trigger test_refuse_finish before delete on settle_queue for each row execute function test_refuse_claim_end()');
}

async function allowClaimEnds(): Promise<void> {
  await sql.unsafe('drop trigger if exists test_refuse_release on settle_queue');
  await sql.unsafe('drop trigger if exists test_refuse_finish on settle_queue');
}

/** The settle round's last insert (trace_content) fails while its table is away; the round's earlier inserts land. */
const moveContent = (from: string, to: string) => ch().command(raw(`RENAME TABLE ${ch().table(from)} TO ${ch().table(to)}`), 'system');

const failedRounds = async () => (await svc.service.deps.metrics.settleRounds.get()).values.find((v) => v.labels.outcome === 'failed')?.value ?? 0;

/** The trace's queue row: whether it is claimed, and how long its lease has left by PostgreSQL's clock; null without a row. */
async function queueRow(traceId: string): Promise<{ claimed: boolean; leaseLeftMs: number | null } | null> {
  const [row] = await sql<{ claimed: boolean; left_ms: string | null }[]>`
    select claim_token is not null as claimed, (extract(epoch from lease_until - now()) * 1000)::bigint::text as left_ms
    from settle_queue where trace_id = ${traceId}::uuid`;
  return row ? { claimed: row.claimed, leaseLeftMs: row.left_ms === null ? null : Number(row.left_ms) } : null;
}

/** The settle versions (processed_at, epoch ms) written for the trace in a table, every row unmerged, and the one FINAL keeps. */
async function versions(table: string, traceId: string): Promise<{ all: number[]; final: number | null }> {
  const read = async (final: boolean) => {
    const result = await ch().client.query({
      query: `SELECT toUnixTimestamp64Milli(processed_at) AS v FROM ${ch().table(table)}${final ? ' FINAL' : ''} WHERE trace_id = {t:String} ORDER BY v`,
      query_params: { t: traceId },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    return (await result.json<{ v: number }>()).map((r) => Number(r.v));
  };
  return { all: await read(false), final: (await read(true))[0] ?? null };
}

/** Sends one run with agent input and output (so the round has trace_content rows); its Lookout trace id. */
async function sendRun(projectId: string, words: string): Promise<string> {
  const { body, traceId } = agentRunRequest({
    start: new Date(Date.now() - 60_000), agent: 'settle-fault', input: `${words} question`, output: `${words} answer`,
    generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search' }],
  });
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': projectId },
    body,
  });
  expect(res.status).toBe(200);
  return lookoutTraceId(projectId, traceId);
}

describe('a settle round that fails, and claims that cannot end', () => {
  it('a failed round is retried with back-off; once the faults are gone its trace settles long before the lease runs out', { timeout: 180_000 }, async () => {
    const project = await svc.newProject('failed round');
    await moveContent('trace_content', 'trace_content_away');
    let contentAway = true;
    try {
      const traceId = await sendRun(project.id, 'walrus');
      await until('a settle round failing', async () => (await failedRounds()) > 0, 60_000);
      // The round failed at its last insert: its summaries landed under its version.
      const partial = await versions('event_trace_processed', traceId);
      expect(partial.all.length).toBeGreaterThan(0);
      expect((await versions('traces', traceId)).all.length).toBeGreaterThan(0);

      // Its claims were released (PostgreSQL is fine), so it is retried: after a back-off, not at
      // the tick rate (every 66 ms here) — a few attempts in 6 s, where the tick rate makes ~90.
      const before = await failedRounds();
      await sleep(6_000);
      expect((await failedRounds()) - before).toBeLessThanOrEqual(10);
      expect((await failedRounds()) - before).toBeGreaterThan(0);

      // Now the release fails too: the next failed round leaves its claim with a lease of two minutes.
      await refuseClaimEnds();
      await until('a failed round whose release was refused', async () => (await queueRow(traceId))?.claimed === true, 60_000);
      // A retry of the refused release is refused too.
      await sleep(2_000);
      const lastFailed = Math.max(...(await versions('event_trace_processed', traceId)).all);
      const held = await queueRow(traceId);
      expect(held?.claimed).toBe(true);
      expect(held!.leaseLeftMs!).toBeGreaterThan(90_000);

      await allowClaimEnds();
      await moveContent('trace_content_away', 'trace_content');
      contentAway = false;
      // Within 60 s, while the lease still had more than 90 s to run: the claim was released by the
      // process that held it, and the trace settled.
      await until('the trace settled after the faults', async () => (await queueRow(traceId)) === null, 60_000);
      for (const table of ['event_trace_processed', 'traces', 'trace_content']) {
        const { final } = await versions(table, traceId);
        expect(final, table).toBeGreaterThan(lastFailed);
      }
      // The failed rounds ran no hooks; the settle that succeeded ran them once.
      await sleep(1_000);
      expect(hookRuns.get(traceId)).toBe(1);
    } finally {
      await allowClaimEnds();
      if (contentAway) await moveContent('trace_content_away', 'trace_content');
    }
  });

  it('a settled round whose finish is refused finishes once allowed, long before the lease runs out, without settling again', { timeout: 180_000 }, async () => {
    const project = await svc.newProject('refused finish');
    await refuseClaimEnds();
    try {
      const traceId = await sendRun(project.id, 'pelican');
      await until('the trace settled and its hooks run', async () => hookRuns.get(traceId) === 1, 60_000);
      // The finish after the hooks is refused, and so is its retry: the row stays claimed.
      await sleep(2_000);
      const held = await queueRow(traceId);
      expect(held?.claimed).toBe(true);
      expect(held!.leaseLeftMs!).toBeGreaterThan(90_000);
      const settled = await versions('event_trace_processed', traceId);
      expect(settled.all).toHaveLength(1);

      await allowClaimEnds();
      await until('the claim finished after the fault', async () => (await queueRow(traceId)) === null, 60_000);
      // Finished, not released: nothing settles it again.
      await sleep(2_000);
      expect(await versions('event_trace_processed', traceId)).toEqual({ all: settled.all, final: settled.all[0] });
      expect(hookRuns.get(traceId)).toBe(1);
    } finally {
      await allowClaimEnds();
    }
  });
});
