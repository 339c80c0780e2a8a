import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import type { ProcessedTrace, TraceFailure } from '../../../src/ingest/trace-hooks.js';
import type { Sql } from '../../../src/platform/postgres/postgres.js';
import { PostgresStatementStats } from '../../../src/platform/postgres/postgres-statement-stats.js';
import { extractIssueGroup, extractIssues } from '../../../src/workspace/issues/issue-extraction.js';
import { fingerprintOf } from '../../../src/workspace/issues/issue-fingerprint.js';

/**
 * Issue extraction of a settle group at once (extractIssueGroup): the same issues,
 * counts, recurrences, records and outbox events as extracting its traces one after another, in a
 * fixed number of statements, idempotent, and safe with other processes extracting at once.
 */
let svc: TestService;
let tenantId: string;
/** A pool of its own on the service's PostgreSQL: what another process (or a counted one) would have. */
const pool = (stats?: PostgresStatementStats): Sql => svc.postgresPool({ max: 4, stats });

beforeAll(async () => {
  svc = await startTestService();
  tenantId = svc.service.bootstrap!.tenantId;
});
afterAll(async () => {
  await svc?.stop();
});

const HOUR = 3_600_000;

interface FailureSpec {
  kind: 'n1' | 'n2' | 'e1' | 'e2' | 'e3';
  span: string;
  at: number;
  message?: string;
}

const KINDS: Record<FailureSpec['kind'], Pick<TraceFailure, 'span_name' | 'tool_name' | 'error_type'>> = {
  n1: { span_name: 'execute_tool pay', tool_name: 'pay', error_type: 'PaymentError' },
  n2: { span_name: 'chat gpt-4o', tool_name: '', error_type: 'RateLimitError' },
  e1: { span_name: 'execute_tool search', tool_name: 'search', error_type: 'TimeoutError' },
  e2: { span_name: 'execute_tool refund', tool_name: 'refund', error_type: 'ValueError' },
  e3: { span_name: 'GET /users/{id}', tool_name: '', error_type: 'HttpError' },
};

function trace(projectId: string, traceId: string, failures: FailureSpec[]): ProcessedTrace {
  return {
    tenantId, projectId, traceId, otelTraceId: traceId.replace(/-/g, ''), timestamp: new Date().toISOString(), agentName: 'support',
    hasError: failures.length > 0, toolCalls: [], agentInput: null, agentOutput: null, spanAttributes: {},
    failures: failures.map((f) => ({ ...KINDS[f.kind], span_id: f.span, message: f.message ?? `${f.kind} failed`, timestamp: new Date(f.at).toISOString() })),
  };
}

/** What a project's issues, occurrences, extraction records and outbox say, with trace ids as their names. */
async function state(projectId: string, traceNames: Map<string, string>) {
  const sql = svc.service.deps.sql;
  const issues = await sql`
    select fingerprint, title, description, status, occurrence_count, first_seen_at, last_seen_at, resolved_at is null as unresolved
    from issues where project_id = ${projectId} order by fingerprint`;
  const occurrences = await sql<{ fingerprint: string; trace_id: string; span_id: string; occurred_at: Date; message: string }[]>`
    select i.fingerprint, o.trace_id, o.span_id, o.occurred_at, o.message from issue_occurrences o join issues i on i.id = o.issue_id
    where o.project_id = ${projectId}`;
  const records = await sql<{ trace_id: string; status: string; reason: string; issue_count: number; occurrence_count: number }[]>`
    select trace_id, status, reason, issue_count, occurrence_count from trace_issue_extractions where project_id = ${projectId}`;
  const events = await sql<{ name: string; fingerprint: string }[]>`
    select e.name, i.fingerprint from issue_event_outbox e join issues i on i.id = e.issue_id where e.project_id = ${projectId} order by e.id`;
  const name = (id: string) => traceNames.get(id) ?? id;
  return {
    issues: [...issues],
    occurrences: occurrences.map((o) => ({ ...o, trace_id: name(o.trace_id) })).sort((a, b) => `${a.trace_id}${a.span_id}`.localeCompare(`${b.trace_id}${b.span_id}`)),
    records: records.map((r) => ({ ...r, trace_id: name(r.trace_id) })).sort((a, b) => a.trace_id.localeCompare(b.trace_id)),
    events: events.map((e) => `${e.name} ${e.fingerprint}`),
  };
}

/**
 * A project with history — an open issue (e1) with an earlier trace's occurrence, a resolved one
 * (e2) and a dismissed one (e3) — and then a settle group: new fingerprints (n1 twice in one trace
 * and again in another, with another first message), the open issue, the earlier trace
 * re-processed with a new failure, occurrences of the resolved issue before and after its
 * resolution (one reopen), the dismissed issue counted, a clean trace, and one trace twice.
 */
async function scenario(name: string, now = Date.now()) {
  const projectId = (await svc.newProject(name)).id;
  const ids = Array.from({ length: 8 }, () => crypto.randomUUID());
  const names = new Map(ids.map((id, i) => [id, `t${i}`]));
  const earlier = trace(projectId, ids[0], [{ kind: 'e1', span: 's0a', at: now - 2 * HOUR }]);
  const history = [earlier, trace(projectId, ids[1], [{ kind: 'e2', span: 's1a', at: now - 2 * HOUR }, { kind: 'e3', span: 's1b', at: now - 2 * HOUR }])];
  for (const t of history) await extractIssues(svc.service.deps.sql, t);
  const issueId = async (kind: FailureSpec['kind']) =>
    (await svc.service.deps.sql<{ id: string }[]>`select id from issues where project_id = ${projectId} and fingerprint = ${fingerprintOf({ ...KINDS[kind] })}`)[0].id;
  expect((await svc.call('PATCH', `/issues/${await issueId('e2')}/resolve`)).status).toBe(200);
  expect((await svc.call('PATCH', `/issues/${await issueId('e3')}/dismiss`)).status).toBe(200);
  // After the resolution, which happened just now.
  const after = now + 10 * 60_000;
  const t2 = trace(projectId, ids[2], [
    { kind: 'n1', span: 's2a', at: now - HOUR, message: 'card declined' },
    { kind: 'e1', span: 's2b', at: now - HOUR },
    { kind: 'n1', span: 's2c', at: now - 30 * 60_000 },
  ]);
  const group = [
    t2,
    trace(projectId, ids[3], [{ kind: 'n2', span: 's3a', at: now - 10 * 60_000 }, { kind: 'n1', span: 's3b', at: now - 2 * HOUR, message: 'other first message' }]),
    trace(projectId, ids[4], []),
    trace(projectId, ids[0], [{ kind: 'e1', span: 's0a', at: now - 2 * HOUR }, { kind: 'e2', span: 's0b', at: now - 3 * HOUR }]),
    trace(projectId, ids[5], [{ kind: 'e2', span: 's5a', at: now - HOUR }, { kind: 'e2', span: 's5b', at: after }, { kind: 'e3', span: 's5c', at: after }]),
    trace(projectId, ids[6], [{ kind: 'e2', span: 's6a', at: after + 1000 }]),
    t2,
    trace(projectId, ids[7], [{ kind: 'e3', span: 's7a', at: now - HOUR }]),
  ];
  return { projectId, names, group };
}

describe('issue extraction of a settle group', () => {
  it('gives what extracting the traces one after another gives: issues, counts, reopen, records, events in order', async () => {
    // The same times in both projects, so their states compare whole.
    const now = Date.now();
    const batched = await scenario('batch', now);
    const { events } = await extractIssueGroup(svc.service.deps.sql, batched.group);
    const single = await scenario('one by one', now);
    for (const t of single.group) await extractIssues(svc.service.deps.sql, t);

    const a = await state(batched.projectId, batched.names);
    const b = await state(single.projectId, single.names);
    expect(a).toEqual(b);
    // And what that is, spelled out: n1 opened by t2 with its first failure's message, counted over three traces' spans.
    const issue = (kind: FailureSpec['kind']) => a.issues.find((i) => i.fingerprint === fingerprintOf({ ...KINDS[kind] }))!;
    expect(issue('n1')).toMatchObject({ status: 'open', occurrence_count: 3, description: 'card declined' });
    expect(issue('e1')).toMatchObject({ status: 'open', occurrence_count: 2 });
    expect(issue('e2')).toMatchObject({ status: 'open', occurrence_count: 5, unresolved: true });
    expect(issue('e3')).toMatchObject({ status: 'dismissed', occurrence_count: 3 });
    const fp = (kind: FailureSpec['kind']) => fingerprintOf({ ...KINDS[kind] });
    expect(a.events.slice(-3)).toEqual([`issue.created ${fp('n1')}`, `issue.created ${fp('n2')}`, `issue.reopened ${fp('e2')}`]);
    expect(events).toBe(3);
    expect(a.records.find((r) => r.trace_id === 't4')).toMatchObject({ status: 'completed', reason: 'no_failures', issue_count: 0, occurrence_count: 0 });
    expect(a.records.find((r) => r.trace_id === 't0')).toMatchObject({ reason: 'failures_attached', issue_count: 2, occurrence_count: 2 });
    expect(a.records.find((r) => r.trace_id === 't2')).toMatchObject({ issue_count: 2, occurrence_count: 3 });
  });

  it('re-processing the group counts nothing twice and writes no events', async () => {
    const { projectId, names, group } = await scenario('again');
    await extractIssueGroup(svc.service.deps.sql, group);
    const first = await state(projectId, names);
    expect(await extractIssueGroup(svc.service.deps.sql, group)).toMatchObject({ events: 0 });
    const second = await state(projectId, names);
    expect(second).toEqual(first);
  });

  it('takes a fixed number of statements however many failing traces the group has', async () => {
    const stats = new PostgresStatementStats('/dev/null');
    const counted = pool(stats);
    const projectId = (await svc.newProject('statements')).id;
    const kinds = Object.keys(KINDS) as FailureSpec['kind'][];
    const group = (n: number) =>
      Array.from({ length: n }, (_, i) => trace(projectId, crypto.randomUUID(), i % 5 === 4 ? [] : [{ kind: kinds[i % 5], span: `a${i}`, at: Date.now() }, { kind: kinds[(i + 2) % 5], span: `b${i}`, at: Date.now() }]));
    const statements = async (traces: ProcessedTrace[]) => {
      const before = stats.snapshot().statements;
      await extractIssueGroup(counted, traces);
      return stats.snapshot().statements - before;
    };
    await statements(group(1)); // the pool's own first-connection reads
    // begin, insert issues, lock the others, insert occurrences, update counts, insert events, the records, commit.
    expect(await statements(group(10))).toBeLessThanOrEqual(8);
    expect(await statements(group(100))).toBeLessThanOrEqual(8);
    // Nothing new to open: no event statement either.
    expect(await statements(group(100))).toBeLessThanOrEqual(7);
    // Traces without failures: one statement, no transaction.
    expect(await statements(Array.from({ length: 50 }, () => trace(projectId, crypto.randomUUID(), [])))).toBe(1);
    const [{ n }] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from issues where project_id = ${projectId}`;
    expect(n).toBe(5);
  });

  it('two processes extracting overlapping groups at once: no deadlock, each issue opened once, every occurrence counted once', async () => {
    const projectId = (await svc.newProject('two processes')).id;
    const processes = [pool(), pool()];
    // Twelve fingerprints, four of them opened before; every group touches most of them in its own order.
    const kinds = Array.from({ length: 12 }, (_, i) => ({ span_name: `execute_tool tool_${i}`, tool_name: `tool_${i}`, error_type: 'ToolError' }));
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const failing = (kindIndexes: number[]): ProcessedTrace => {
      const t = trace(projectId, crypto.randomUUID(), []);
      t.failures = kindIndexes.map((k) => ({ ...kinds[k], span_id: crypto.randomBytes(8).toString('hex'), message: '', timestamp: new Date().toISOString() }));
      t.hasError = true;
      return t;
    };
    await extractIssueGroup(svc.service.deps.sql, [failing([0, 3, 6, 9])]);
    const groups = Array.from({ length: 12 }, () =>
      Array.from({ length: 20 }, () => failing(Array.from({ length: 3 }, () => Math.floor(random() * kinds.length)))));
    // A trace re-processed by the other process at the same time as the first.
    groups[1].push(groups[0][0]);
    const results = await Promise.allSettled(groups.map((g, i) => extractIssueGroup(processes[i % 2], g)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const sql = svc.service.deps.sql;
    const issues = await sql<{ id: string; occurrence_count: number; stored: number }[]>`
      select i.id, i.occurrence_count, (select count(*)::int from issue_occurrences o where o.issue_id = i.id) as stored
      from issues i where i.project_id = ${projectId}`;
    const used = new Set([0, 3, 6, 9, ...groups.flat().flatMap((t) => t.failures.map((f) => Number(f.tool_name.slice(5))))]);
    expect(issues).toHaveLength(used.size);
    for (const i of issues) expect(i.occurrence_count).toBe(i.stored);
    const distinctSpans = new Set(groups.flat().flatMap((t) => t.failures.map((f) => `${t.traceId} ${f.span_id}`)));
    const total = issues.reduce((n, i) => n + i.stored, 0);
    expect(total).toBe(distinctSpans.size + 4);
    const created = await sql<{ n: number }[]>`
      select count(*)::int as n from issue_event_outbox where project_id = ${projectId} and name = 'issue.created'`;
    expect(created[0].n).toBe(used.size);
  });
});
