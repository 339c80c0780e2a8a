import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { ingestService } from '../../../src/ingest/ingest-module.js';
import { removeUnstoredRows } from '../../../src/ingest/write/unstored-rows.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';

/**
 * A flush that fails after the event tables were written and before `spans` (the order the writer
 * uses): the request is answered 503 and nothing of it is counted anywhere — not by the query
 * language over any event source, not by a preset view, not by the trace list. Its re-send is then
 * counted exactly once.
 */

let svc: TestService;
let project: { id: string };

beforeAll(async () => {
  svc = await startTestService();
  project = await svc.newProject('failed flush');
});
afterAll(async () => {
  await svc?.stop();
});

const start = new Date(Date.now() - 10 * 60_000);
const wholeSecond = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const hourStart = wholeSecond(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);
const hourEnd = wholeSecond(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 3_600_000);

async function post(body: string): Promise<{ status: number; code?: string; retryAfter: string | null }> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
    body,
  });
  const text = await res.text();
  return { status: res.status, code: res.status === 200 ? undefined : JSON.parse(text).code, retryAfter: res.headers.get('retry-after') };
}

async function count(from: string): Promise<number> {
  const res = await svc.call('POST', `/projects/${project.id}/analytics/query`, {
    body: { from, start: hourStart, end_exclusive: hourEnd, measures: [{ as: 'n', agg: 'count' }] },
  });
  expect(res.status).toBe(200);
  return Number(res.body.rows[0]?.n ?? 0);
}

/** Everything analytics and the trace API say about the project. */
async function answers() {
  const general = await svc.call('GET', `/projects/${project.id}/analytics?view=general&hours=24&end_exclusive=${hourEnd}`);
  const window = `start=${hourStart}&end_exclusive=${hourEnd}`;
  const scorecard = await svc.call('GET', `/projects/${project.id}/analytics?view=model_scorecard&${window}`);
  const tools = await svc.call('GET', `/projects/${project.id}/analytics?view=tool_aggregates&${window}`);
  const agents = await svc.call('GET', `/projects/${project.id}/analytics?view=agent_scorecard&${window}`);
  const base = await svc.call('GET', `/projects/${project.id}/analytics?view=base&${window}`);
  const traces = await svc.call('GET', `/projects/${project.id}/traces?limit=50`);
  for (const r of [general, scorecard, tools, agents, base, traces]) expect(r.status, JSON.stringify(r.body)).toBe(200);
  return {
    generations: await count('generation.completed'),
    tools: await count('tool.called'),
    errors: await count('span.errored'),
    runs: await count('trace.processed'),
    traces: traces.body.items?.length ?? traces.body.traces?.length,
    general: strip(general.body),
    scorecard: strip(scorecard.body),
    tool_aggregates: strip(tools.body),
    agent_scorecard: strip(agents.body),
    base: strip(base.body),
  };
}

/** Answers without the fields that move with the clock alone. */
function strip(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body, (key, value) => (/^(generated_at|as_of|data_as_of|settle_lag_ms|fresh|freshness|settled_through|now)$/.test(key) ? undefined : value)));
}

describe('a flush failing between the event inserts and the spans insert', () => {
  it('answers 503, leaves nothing any answer counts, and the re-send counts once', async () => {
    const empty = await answers();
    expect(empty).toMatchObject({ generations: 0, tools: 0, errors: 0, runs: 0, traces: 0 });

    const { body } = agentRunRequest({
      start,
      agent: 'flaky',
      generations: [{ model: 'gpt-4o', input: 300, output: 30 }, { model: 'gpt-4o', input: 300, output: 30 }],
      tools: [{ name: 'lookup', error: true }],
      failed: true,
    });
    const writer = ingestService(svc.service.deps).writer;
    let failedAfterEvents = 0;
    writer.beforeSpansInsert = async () => {
      failedAfterEvents++;
      throw new Error('spans insert failed (test)');
    };
    const refused = await post(body);
    writer.beforeSpansInsert = null;
    expect(failedAfterEvents).toBe(1);
    expect(refused.status).toBe(503);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);

    // Never re-sent: nothing of it anywhere (settling has had time to act on anything it saw).
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await answers()).toEqual(empty);

    // Re-sent: stored and counted once.
    expect((await post(body)).status).toBe(200);
    // Settling the re-sent run may lag on a loaded runner: wait for it (up to a minute).
    const once = { generations: 2, tools: 1, errors: 2, runs: 1, traces: 1 };
    let after = await answers();
    for (let i = 0; i < 120 && Object.entries(once).some(([k, v]) => after[k as keyof typeof once] !== v); i++) {
      await new Promise((r) => setTimeout(r, 500));
      after = await answers();
    }
    expect(after).toMatchObject(once);
  });
});

describe('a flush failing after its spans landed, while the engine holds the delete back', () => {
  it('stores the re-send (not taken for a duplicate of rows being deleted) and keeps it once the delete applies', async () => {
    const { ch } = svc.service.deps;
    const tables = ['spans', 'event_generation_completed', 'event_tool_called', 'event_span_errored'];
    const other = await svc.newProject('failed flush, delete held back');
    const { body } = agentRunRequest({
      start,
      agent: 'held',
      generations: [{ model: 'gpt-4o', input: 100, output: 10 }],
      tools: [{ name: 'lookup' }],
    });
    let stored: { rows: number; spans: number };
    const post = (payload: string) =>
      fetch(`${svc.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': other.id },
        body: payload,
      });
    const spanRows = async () => {
      const [row] = await ch.read<{ rows: string; spans: string }>(
        sql`SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${raw(ch.table('spans'))} WHERE project_id = ${param('String', other.id)}`,
        { lane: 'system' },
      );
      return { rows: Number(row.rows), spans: Number(row.spans) };
    };
    // Merges stopped: the engine applies no mutation, so the failed flush's delete stays pending.
    for (const table of tables) await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table(table)}` });
    try {
      // The spans insert succeeds, then the settle queue refuses the flush's traces: the flush fails with its rows stored.
      const settler = ingestService(svc.service.deps).settler;
      const record = settler.record.bind(settler);
      settler.record = async () => {
        settler.record = record;
        throw new Error('settle queue unavailable (test)');
      };
      expect((await post(body)).status).toBe(503);
      stored = await spanRows();
      expect(stored.rows).toBeGreaterThan(0);

      expect((await post(body)).status).toBe(200);
      // Old rows (delete pending) and the re-sent ones side by side until the engine applies the delete.
      expect((await spanRows()).rows).toBe(2 * stored.spans);
    } finally {
      for (const table of tables) await ch.client.command({ query: `SYSTEM START MERGES ${ch.table(table)}` });
    }
    // Merging again: the engine applies the deletes, which take the first copies only.
    const deadline = Date.now() + 60_000;
    const pending = async () => {
      const [row] = await ch.read<{ n: string }>(
        sql`SELECT count() AS n FROM system.mutations WHERE database = ${param('String', ch.database)} AND table IN ${param('Array(String)', tables)} AND is_done = 0`,
        { lane: 'system' },
      );
      return Number(row.n);
    };
    while ((await pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await pending()).toBe(0);
    expect(await spanRows()).toEqual({ rows: stored.spans, spans: stored.spans });
    // One generation (settling writes a newer version of its row; FINAL folds versions, as analytics reads).
    const [generations] = await ch.read<{ n: string }>(
      sql`SELECT count() AS n FROM ${raw(ch.table('event_generation_completed'))} FINAL WHERE project_id = ${param('String', other.id)}`,
      { lane: 'system' },
    );
    expect(Number(generations.n)).toBe(1);
  });
});

describe('the cleanup of a failed flush waits for its own deletes only', () => {
  it('answers once its deletes applied, though another mutation of the same table stays undone', async () => {
    const { ch } = svc.service.deps;
    const mine = await svc.newProject('failed flush, own deletes');
    const unrelated = await svc.newProject('failed flush, unrelated mutation');
    for (const [project, agent] of [[mine, 'mine'], [unrelated, 'other']] as const) {
      const { body } = agentRunRequest({ start, agent, generations: [{ model: 'gpt-4o', input: 10, output: 1 }], tools: [{ name: 'lookup' }] });
      const res = await fetch(`${svc.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
        body,
      });
      expect(res.status).toBe(200);
    }
    const spansOf = async (projectId: string) =>
      ch.read<{ tenant_id: string; project_id: string; trace_id: string; span_id: string }>(
        sql`SELECT toString(tenant_id) AS tenant_id, toString(project_id) AS project_id, trace_id, span_id FROM ${raw(ch.table('spans'))} WHERE project_id = ${param('String', projectId)}`,
        { lane: 'system' },
      );
    const flushed = (await spansOf(mine.id)).map((r) => ({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id, spanId: r.span_id }));
    // The run's three spans: its root, the generation and the tool call.
    expect(flushed.length).toBe(3);
    const mutations = async (where: string, value: string) =>
      ch.read<{ is_done: number; latest_fail_reason: string }>(
        sql`SELECT is_done, latest_fail_reason FROM system.mutations WHERE database = ${param('String', ch.database)} AND position(command, ${param('String', value)}) > 0 AND ${raw(where)}`,
        { lane: 'system' },
      );
    const ownKey = `${flushed[0].tenantId}/${flushed[0].projectId}/${flushed[0].traceId}/${flushed[0].spanId}`;
    const held = 'unrelated mutation held';
    try {
      const applied = await removeUnstoredRows(ch, flushed, 60_000, async () => {
        // Once the deletes applied, a mutation of another kind on the same table starts and cannot finish.
        const deadline = Date.now() + 60_000;
        while ((await mutations('is_done = 1', ownKey)).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        await ch.client.command({
          query: `ALTER TABLE ${ch.table('spans')} UPDATE name = concat(name, toString(throwIf(1, '${held}'))) WHERE project_id = {p:String}`,
          query_params: { p: unrelated.id },
          clickhouse_settings: { mutations_sync: '0' },
        });
      });
      expect(applied).toBe(true);
      // The other mutation was there and undone all along.
      const other = await mutations('is_done = 0', held);
      expect(other).toHaveLength(1);
      expect((await spansOf(mine.id)).length).toBe(0);
    } finally {
      await ch.client.command({ query: `KILL MUTATION WHERE database = {d:String} AND position(command, {h:String}) > 0 SYNC`, query_params: { d: ch.database, h: held } });
    }
    expect(await spansOf(unrelated.id)).toHaveLength(3);
  });
});
