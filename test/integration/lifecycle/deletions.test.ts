/**
 * Deletion jobs against the real stores: a trace, a thread, everything before an instant and a whole
 * project are deleted, after which no table of either store holds a row of them, and every preset
 * view and query answers exactly what a project that never received them answers (the same spans,
 * sent to a second project). Issues left with no occurrence say so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoggedProjects, loggedProjectState } from '../../../src/ingest/settle/logged-projects.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import type { RunSpec } from '../../helpers/otlp-json.js';
import { param, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { answers, build, finished, send, settled, storedRows, traceIdsOf, until, zeros, type BuiltRun } from './deletion-harness.js';

let svc: TestService;
let tenantId: string;

const hourMs = 3_600_000;
const now = Date.now();
const base = new Date(Math.floor(now / hourMs) * hourMs - 3 * hourMs);
const windowStart = new Date(base.getTime() - 3 * 24 * hourMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const windowEnd = new Date(base.getTime() + 24 * hourMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);

/** Five runs: a failing thread of two, a failing run on its own, an old run (two days back), and a run of another thread. */
function specs(): RunSpec[] {
  return [
    { start: at(0), agent: 'support', threadId: 'thread-one', generations: [{ model: 'gpt-4o', input: 100, output: 20 }], tools: [{ name: 'search', error: true }], failed: true },
    { start: at(5), agent: 'support', threadId: 'thread-one', generations: [{ model: 'gpt-4o', input: 50, output: 10 }], tools: [{ name: 'search' }] },
    { start: at(10), agent: 'billing', generations: [{ model: 'claude-sonnet-4', input: 70, output: 30 }], tools: [{ name: 'refund', error: true }], failed: true },
    { start: new Date(base.getTime() - 2 * 24 * hourMs), agent: 'billing', generations: [{ model: 'claude-sonnet-4', input: 10, output: 5 }] },
    { start: at(20), agent: 'support', threadId: 'thread-two', generations: [{ model: 'gpt-4o-mini', input: 30, output: 3 }], tools: [{ name: 'search' }] },
  ];
}

/**
 * Two projects: `doomed` gets every run, `kept` only those that are to remain. A tool monitor and a
 * metric value per trace give the PostgreSQL tables rows of every trace too.
 */
async function twoProjects(name: string, runs: BuiltRun[], remaining: BuiltRun[]): Promise<{ doomed: string; kept: string }> {
  const doomed = (await svc.newProject(`${name} doomed`)).id;
  const kept = (await svc.newProject(`${name} kept`)).id;
  for (const project of [doomed, kept]) {
    const monitor = await svc.call('POST', `/projects/${project}/monitors`, { body: { name: 'search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true } } });
    expect(monitor.status).toBe(201);
  }
  await send(svc, doomed, runs);
  await send(svc, kept, remaining);
  await settled(svc, doomed, runs.length);
  await settled(svc, kept, remaining.length);
  const metric = await svc.call('POST', `/projects/${doomed}/metrics`, { body: { name: 'helpful', collection_type: 'BINARY' } });
  expect(metric.status).toBe(201);
  for (const id of traceIdsOf(doomed, runs)) {
    expect((await svc.call('POST', `/metrics/${metric.body.id}/events`, { body: { trace_id: id, value: 1 } })).status).toBeLessThan(300);
  }
  return { doomed, kept };
}

beforeAll(async () => {
  // A project's deletion starts INGEST_TIMEOUT_MS + 5 s after it was asked for (docs/data-lifecycle.md).
  svc = await startTestService({ INGEST_TIMEOUT_MS: '5000' });
  tenantId = svc.service.bootstrap!.tenantId;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

describe('deleting traces', () => {
  it('deletes listed traces from every table, and the answers are those of a project without them', async () => {
    const runs = build(specs());
    const gone = [runs[2]];
    const { doomed, kept } = await twoProjects('by trace', runs, runs.filter((r) => !gone.includes(r)));
    const goneIds = traceIdsOf(doomed, gone);
    const before = await storedRows(svc.service.deps, tenantId, doomed, goneIds);
    for (const table of ['spans', 'traces', 'event_trace_processed', 'event_generation_completed', 'event_tool_called', 'event_span_errored', 'pg.issue_occurrences', 'pg.trace_issue_extractions', 'pg.metric_events', 'pg.stored_traces']) {
      expect(before[table], table).toBeGreaterThan(0);
    }
    const issuesBefore = (await svc.call('GET', `/projects/${doomed}/issues`)).body.issues;
    // Not vacuous: before the deletion, the two projects answer differently.
    expect(await answers(svc, doomed, windowStart, windowEnd)).not.toEqual(await answers(svc, kept, windowStart, windowEnd));

    // An OpenTelemetry trace id is accepted and becomes the Lookout id.
    const res = await svc.call('POST', `/projects/${doomed}/deletions`, { body: { trace_ids: [gone[0].otelTraceId.toUpperCase()] } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ project_id: doomed, kind: 'traces', trace_ids: goneIds, thread_id: null, before: null, requested_by: { actor: 'user', surface: 'api' } });
    expect(['queued', 'running', 'succeeded']).toContain(res.body.status);
    const job = await finished(svc, res.body.id);
    expect(job.traces_deleted).toBe(1);
    expect(job.rows_deleted.spans).toBe(before.spans);
    expect(job.rows_deleted['pg.issue_occurrences']).toBe(before['pg.issue_occurrences']);
    expect(job.finished_at).not.toBeNull();

    expect(await storedRows(svc.service.deps, tenantId, doomed, goneIds)).toEqual(zeros(before));
    expect(await answers(svc, doomed, windowStart, windowEnd)).toEqual(await answers(svc, kept, windowStart, windowEnd));
    expect((await svc.call('GET', `/traces/${goneIds[0]}`)).status).toBe(404);

    // The refund issue had only that trace's occurrence: it stays, says so, and points at nothing.
    const issuesAfter = (await svc.call('GET', `/projects/${doomed}/issues`)).body.issues as any[];
    expect(issuesAfter.map((i) => i.id).sort()).toEqual(issuesBefore.map((i: any) => i.id).sort());
    const emptied = issuesAfter.filter((i) => i.occurrences_deleted_at !== null);
    expect(emptied.length).toBe(job.issues_emptied);
    expect(emptied.length).toBeGreaterThan(0);
    for (const issue of emptied) {
      expect(issue.occurrence_count).toBe(0);
      expect((await svc.call('GET', `/issues/${issue.id}/occurrences`)).body.occurrences).toEqual([]);
    }
    for (const issue of issuesAfter.filter((i) => i.occurrences_deleted_at === null)) expect(issue.occurrence_count).toBeGreaterThan(0);

    const list = await svc.call('GET', `/projects/${doomed}/deletions`);
    expect(list.status).toBe(200);
    expect(list.body.deletions.map((d: any) => d.id)).toEqual([res.body.id]);
  }, 180_000);

  it('deletes a thread, then everything before an instant', async () => {
    const runs = build(specs());
    const thread = runs.filter((r) => r.spec.threadId === 'thread-one');
    const old = runs.filter((r) => r.spec.start.getTime() < base.getTime());
    const remaining = runs.filter((r) => !thread.includes(r) && !old.includes(r));
    const { doomed, kept } = await twoProjects('by thread', runs, remaining);
    const threadIds = traceIdsOf(doomed, thread);
    const threadRows = await storedRows(svc.service.deps, tenantId, doomed, threadIds);
    expect(threadRows.spans).toBeGreaterThan(0);

    const byThread = await svc.call('POST', `/projects/${doomed}/deletions`, { body: { thread_id: 'thread-one' } });
    expect(byThread.status).toBe(202);
    expect((await finished(svc, byThread.body.id)).traces_deleted).toBe(2);
    expect(await storedRows(svc.service.deps, tenantId, doomed, threadIds)).toEqual(zeros(threadRows));

    const oldIds = traceIdsOf(doomed, old);
    const oldRows = await storedRows(svc.service.deps, tenantId, doomed, oldIds);
    expect(oldRows.spans).toBeGreaterThan(0);
    const byTime = await svc.call('POST', `/projects/${doomed}/deletions`, { body: { before: new Date(base.getTime() - hourMs).toISOString() } });
    expect(byTime.status).toBe(202);
    expect((await finished(svc, byTime.body.id)).traces_deleted).toBe(1);
    expect(await storedRows(svc.service.deps, tenantId, doomed, oldIds)).toEqual(zeros(oldRows));

    expect(await answers(svc, doomed, windowStart, windowEnd)).toEqual(await answers(svc, kept, windowStart, windowEnd));
    const listed = (await svc.call('GET', `/projects/${doomed}/deletions`)).body.deletions;
    expect(listed.map((d: any) => d.kind)).toEqual(['before', 'thread']);
  }, 180_000);
});

describe('deleting a project', () => {
  it('removes every row the project stored, in both stores, and keeps the record of the deletion', async () => {
    const runs = build(specs());
    const { doomed, kept } = await twoProjects('whole', runs, runs);
    // Once every issue event is relayed, nothing changes either project's rows any more.
    await until('issue events relayed', async () => (await svc.service.deps.sql`select 1 from issue_event_outbox where relayed_at is null`).length === 0);
    const keptBefore = await storedRows(svc.service.deps, tenantId, kept);
    const before = await storedRows(svc.service.deps, tenantId, doomed);
    expect(before.spans).toBeGreaterThan(0);
    expect(before.event_issue).toBeGreaterThan(0);
    // Both projects are marked as having received log records (what the logs path records first).
    const { sql } = svc.service.deps;
    await new LoggedProjects(sql).mark([doomed, kept].map((projectId) => ({ tenantId, projectId })));
    const marks = async () => (await sql<{ name: string }[]>`select name from shared_state where name = any(${[doomed, kept].map((p) => loggedProjectState(tenantId, p))}::text[]) order by name`).map((r) => r.name);
    expect(await marks()).toHaveLength(2);

    const res = await svc.call('DELETE', `/projects/${doomed}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ project_id: doomed, kind: 'project' });
    expect((await svc.call('GET', `/projects/${doomed}`)).status).toBe(404);
    const job = await finished(svc, res.body.id);
    expect(job.traces_deleted).toBe(runs.length);
    expect(await storedRows(svc.service.deps, tenantId, doomed)).toEqual(zeros(before));
    // Its mark goes with it; the other project's stays.
    expect(job.rows_deleted['pg.shared_state']).toBe(1);
    expect(await marks()).toEqual([loggedProjectState(tenantId, kept)]);
    // The other project, with the same spans, keeps all of them (other tables may have merged
    // repeated versions of a row meanwhile, so they are checked for being still there).
    const keptAfter = await storedRows(svc.service.deps, tenantId, kept);
    expect(keptAfter.spans).toBe(keptBefore.spans);
    for (const [table, n] of Object.entries(keptBefore)) if (n > 0) expect(keptAfter[table], table).toBeGreaterThan(0);
  }, 180_000);
});

describe('the deletion routes', () => {
  it('answer 400 for a body that names no selection or several, and 404 across tenants', async () => {
    const project = (await svc.newProject('deletion input')).id;
    const cases: [unknown, RegExp][] = [
      [{}, /exactly one of trace_ids, thread_id or before/],
      [{ trace_ids: ['not-an-id'] }, /trace_ids/],
      [{ trace_ids: [] }, /trace_ids/],
      [{ thread_id: 't', before: '2026-01-01T00:00:00Z' }, /exactly one/],
      [{ thread_id: '   ' }, /thread_id: must not be blank/],
      [{ before: 'yesterday' }, /before/],
      [{ everything: true }, /everything/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', `/projects/${project}/deletions`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    expect((await svc.call('GET', `/projects/${project}/deletions`)).body.deletions).toEqual([]);

    const created = await svc.call('POST', `/projects/${project}/deletions`, { body: { thread_id: 'nothing here' } });
    expect(created.status).toBe(202);
    const other = await svc.newTenant('deletion intruder');
    expect((await svc.call('GET', `/deletions/${created.body.id}`, { key: other.adminKey })).status).toBe(404);
    expect((await svc.call('POST', `/projects/${project}/deletions`, { key: other.adminKey, body: { thread_id: 'x' } })).status).toBe(404);
    const reader = await svc.newKey('read');
    expect((await svc.call('POST', `/projects/${project}/deletions`, { key: reader, body: { thread_id: 'x' } })).status).toBe(403);
    expect((await svc.call('GET', `/deletions/${created.body.id}`, { key: reader })).status).toBe(200);
    expect((await finished(svc, created.body.id)).traces_deleted).toBe(0);
  }, 120_000);
});

describe('a deletion job waits for its own deletes only', () => {
  it('finishes once its deletes applied, though another mutation of the same table stays undone', async () => {
    const { ch } = svc.service.deps;
    const runs = build([{ start: at(30), agent: 'own', generations: [{ model: 'gpt-4o', input: 10, output: 1 }], tools: [{ name: 'lookup' }] }]);
    const doomed = (await svc.newProject('own deletes')).id;
    const unrelated = (await svc.newProject('unrelated mutation')).id;
    await send(svc, doomed, runs);
    await send(svc, unrelated, runs);
    await settled(svc, doomed, 1);
    await settled(svc, unrelated, 1);
    const mutations = async (table: string, text: string, done: 0 | 1) =>
      ch.read<{ n: string }>(
        sql`SELECT count() AS n FROM system.mutations WHERE database = ${param('String', ch.database)} AND table = ${param('String', table)}
            AND position(command, ${param('String', text)}) > 0 AND is_done = ${param('UInt8', done)}`,
        { lane: 'system' },
      ).then(([row]) => Number(row.n));
    const held = 'unrelated mutation held';
    // Merges stopped on one table: the job's delete there stays pending past its first wait (2 s),
    // so the job goes on polling whether its deletes applied.
    const toolTable = ch.table('event_tool_called');
    await ch.client.command({ query: `SYSTEM STOP MERGES ${toolTable}` });
    try {
      const res = await svc.call('POST', `/projects/${doomed}/deletions`, { body: { trace_ids: [runs[0].otelTraceId] } });
      expect(res.status).toBe(202);
      // Once the job's delete of `spans` applied, a mutation of another kind on `spans` starts and cannot finish.
      await until('the job\'s delete of spans applied', async () => (await mutations('spans', doomed, 1)) > 0 && (await mutations('event_tool_called', doomed, 0)) > 0);
      await ch.client.command({
        query: `ALTER TABLE ${ch.table('spans')} UPDATE name = concat(name, toString(throwIf(1, '${held}'))) WHERE project_id = {p:String}`,
        query_params: { p: unrelated },
        clickhouse_settings: { mutations_sync: '0' },
      });
      // Past the job's first wait (2 s from its submit): it now polls whether its deletes applied.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      await ch.client.command({ query: `SYSTEM START MERGES ${toolTable}` });
      const job = await finished(svc, res.body.id, 60_000);
      expect(job.traces_deleted).toBe(1);
      // The other mutation was there and undone all along.
      expect(await mutations('spans', held, 0)).toBe(1);
      expect(await storedRows(svc.service.deps, tenantId, doomed, traceIdsOf(doomed, runs))).toMatchObject({ spans: 0, event_tool_called: 0 });
    } finally {
      await ch.client.command({ query: `SYSTEM START MERGES ${toolTable}` });
      await ch.client.command({ query: `KILL MUTATION WHERE database = {d:String} AND position(command, {h:String}) > 0 SYNC`, query_params: { d: ch.database, h: held } });
    }
  }, 180_000);
});
