import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { recordIssueEvents, type IssueEventInput } from './issue-event-outbox.js';
import { ISSUE_COLUMNS } from './issue-store.js';
import type { IssueRow } from './issue-types.js';
import { SYSTEM_ORIGIN } from '../../spans/origin.js';

/** One occurrence to attach: a failed span (extraction) or a matching call (a monitor). */
export interface FingerprintOccurrence {
  spanId: string;
  occurredAt: Date;
  errorType: string;
  spanName: string;
  toolName: string;
  message: string;
}

export interface FingerprintIssueInput {
  tenantId: string;
  projectId: string;
  fingerprint: string;
  title: string;
  description: string | null;
  traceId: string;
  otelTraceId: string;
  occurrences: FingerprintOccurrence[];
}

export interface AttachResult {
  issueId: string;
  /** This input opened the issue (the first input of a fingerprint that had none). */
  created: boolean;
  /** Occurrences of this input that were new. */
  attached: number;
}

/**
 * The order every process locks issues in: PostgreSQL's (uuid, fingerprint `collate "C"`) order,
 * which is byte order. JS compares UTF-16 code units, which matches UTF-8 byte order only up to
 * U+FFFF; the keys here are ASCII (a lower-case uuid, NUL, a hex or `monitor:<uuid>` fingerprint),
 * so the two agree. A non-ASCII fingerprint would need a byte-wise comparison.
 */
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The issue columns qualified by the alias `i` (a join selects them beside the keys). */
const ISSUE_COLUMNS_OF_I = ISSUE_COLUMNS.split(', ').map((c) => `i.${c}`).join(', ');

interface IssueKey {
  tenantId: string;
  projectId: string;
  fingerprint: string;
  /** The input that opens the issue if there is none: the first with this fingerprint, as one input after another would. */
  first: FingerprintIssueInput;
  /** Its position in the inputs. */
  firstIndex: number;
}

const keyOf = (i: { projectId: string; fingerprint: string }) => `${i.projectId.toLowerCase()}\u0000${i.fingerprint}`;
const occurrenceKey = (issueId: string, traceId: string, spanId: string) => `${issueId.toLowerCase()}\u0000${traceId.toLowerCase()}\u0000${spanId}`;

/** issue.created of each issue an input opened, stamped with the issue's creation time, with the input's position. */
function createdEvents(inputs: FingerprintIssueInput[], results: AttachResult[], issues: Map<string, IssueRow>): { order: number; event: IssueEventInput }[] {
  const events: { order: number; event: IssueEventInput }[] = [];
  inputs.forEach((input, i) => {
    if (!results[i].created) return;
    const issue = issues.get(keyOf(input))!;
    events.push({ order: i, event: { tenantId: input.tenantId, projectId: input.projectId, issueId: issue.id, name: 'issue.created', actor: SYSTEM_ORIGIN, occurredAt: issue.created_at } });
  });
  return events;
}

/**
 * Every fingerprint's issue, created when there is none yet, locked for this transaction. Two
 * statements for any number of fingerprints: an insert that skips those that exist, then a lock of
 * the ones it did not create. Both go in (project, fingerprint) byte order, so concurrent batches
 * (other settle groups, other processes) wait for each other in one order and cannot deadlock: an
 * insert waits only for another transaction's uncommitted insert of the same key, a lock only for
 * another's lock or insert, and each transaction takes both kinds in ascending key order.
 */
async function issuesForFingerprints(tx: SqlHandle, keys: IssueKey[]): Promise<{ issues: Map<string, IssueRow>; created: Set<string> }> {
  const ids = keys.map(() => crypto.randomUUID());
  const inserted = await tx<IssueRow[]>`
    insert into issues (id, tenant_id, project_id, title, description, fingerprint)
    select k.id, k.tenant_id, k.project_id, k.title, k.description, k.fingerprint
    from unnest(${ids}::uuid[], ${keys.map((k) => k.tenantId)}::uuid[], ${keys.map((k) => k.projectId)}::uuid[],
      ${keys.map((k) => k.first.title.slice(0, 300))}::text[], ${keys.map((k) => (k.first.description ? k.first.description.slice(0, 5000) : null))}::text[],
      ${keys.map((k) => k.fingerprint)}::text[]) with ordinality as k(id, tenant_id, project_id, title, description, fingerprint, n)
    order by k.n
    on conflict (project_id, fingerprint) where fingerprint is not null do nothing
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  const issues = new Map<string, IssueRow>();
  const created = new Set<string>();
  for (const row of inserted) {
    const key = keyOf({ projectId: row.project_id, fingerprint: row.fingerprint! });
    issues.set(key, row);
    created.add(key);
  }
  const rest = keys.filter((k) => !created.has(keyOf(k)));
  if (rest.length > 0) {
    // LockRows runs above the sort, so rows are locked in this order.
    const existing = await tx<IssueRow[]>`
      select ${tx.unsafe(ISSUE_COLUMNS_OF_I)}
      from issues i
      join unnest(${rest.map((k) => k.tenantId)}::uuid[], ${rest.map((k) => k.projectId)}::uuid[], ${rest.map((k) => k.fingerprint)}::text[]) as k(tenant_id, project_id, fingerprint)
        on i.tenant_id = k.tenant_id and i.project_id = k.project_id and i.fingerprint = k.fingerprint
      order by i.project_id, i.fingerprint collate "C"
      for update of i`;
    for (const row of existing) issues.set(keyOf({ projectId: row.project_id, fingerprint: row.fingerprint! }), row);
  }
  return { issues, created };
}

/**
 * Opens the project's issue for each input's fingerprint or attaches to it, in the caller's
 * transaction — the one way issues are opened by the system (trace extraction, a settle group's
 * traces at once, and monitors). A fixed number of statements however many inputs: the issues
 * (issuesForFingerprints), the occurrences, the issues' counts, the events. The result is what
 * applying the inputs one after another gives: the first input of a new fingerprint opens its
 * issue (its title and description), counts add up, and the outbox events come in input order.
 * Occurrences are keyed by (issue, trace, span), so re-processing a trace counts nothing twice.
 *
 * Recurrence (docs/issues.md): a resolved issue whose failure happens again after it was resolved
 * is reopened (status open, issue.reopened by the system, assignee kept) — once, by the first
 * input with such an occurrence. A dismissed issue stays dismissed but still counts the occurrence.
 * Occurrences older than the resolution never reopen.
 */
export async function attachToIssues(tx: SqlHandle, inputs: FingerprintIssueInput[]): Promise<{ results: AttachResult[]; events: number }> {
  if (inputs.length === 0) return { results: [], events: 0 };
  const byKey = new Map<string, IssueKey>();
  inputs.forEach((input, i) => {
    const key = keyOf(input);
    if (!byKey.has(key)) byKey.set(key, { tenantId: input.tenantId, projectId: input.projectId.toLowerCase(), fingerprint: input.fingerprint, first: input, firstIndex: i });
  });
  const keys = [...byKey.entries()].sort(([a], [b]) => byteOrder(a, b)).map(([, k]) => k);
  const { issues, created } = await issuesForFingerprints(tx, keys);
  const issueOf = (input: FingerprintIssueInput) => issues.get(keyOf(input))!;

  // Each (issue, trace, span) once, from the first input that has it.
  const rowOf = new Map<string, number>();
  const rows: { input: number; issueId: string; o: FingerprintOccurrence; trace: FingerprintIssueInput }[] = [];
  inputs.forEach((input, i) => {
    const issueId = issueOf(input).id;
    for (const o of input.occurrences) {
      const id = occurrenceKey(issueId, input.traceId, o.spanId);
      if (rowOf.has(id)) continue;
      rowOf.set(id, rows.length);
      rows.push({ input: i, issueId, o, trace: input });
    }
  });
  const results: AttachResult[] = inputs.map((input) => ({ issueId: issueOf(input).id, created: false, attached: 0 }));
  for (const key of created) results[byKey.get(key)!.firstIndex].created = true;
  const col = <T>(pick: (r: (typeof rows)[number]) => T) => rows.map(pick);
  // No occurrence to insert (every failure already counted): the statement is skipped, the rest finds nothing touched.
  const inserted = rows.length === 0 ? [] : await tx<{ issue_id: string; trace_id: string; span_id: string }[]>`
    insert into issue_occurrences (tenant_id, project_id, issue_id, trace_id, otel_trace_id, span_id, occurred_at, error_type, span_name, tool_name, message)
    select o.tenant_id, o.project_id, o.issue_id, o.trace_id, o.otel_trace_id, o.span_id, o.occurred_at, o.error_type, o.span_name, o.tool_name, o.message
    from unnest(${col((r) => r.trace.tenantId)}::uuid[], ${col((r) => r.trace.projectId)}::uuid[], ${col((r) => r.issueId)}::uuid[],
      ${col((r) => r.trace.traceId)}::uuid[], ${col((r) => r.trace.otelTraceId)}::text[], ${col((r) => r.o.spanId)}::text[],
      ${col((r) => r.o.occurredAt.toISOString())}::timestamptz[], ${col((r) => r.o.errorType)}::text[], ${col((r) => r.o.spanName)}::text[],
      ${col((r) => r.o.toolName)}::text[], ${col((r) => r.o.message.slice(0, 5000))}::text[])
      with ordinality as o(tenant_id, project_id, issue_id, trace_id, otel_trace_id, span_id, occurred_at, error_type, span_name, tool_name, message, n)
    order by o.n
    on conflict (issue_id, trace_id, span_id) do nothing
    returning issue_id, trace_id, span_id`;
  // Per issue: its new occurrences' count and time span, and the first input (in order) that reopens it.
  const touched = new Map<string, { n: number; earliest: number; latest: number; reopenedBy: number }>();
  const newRows = inserted.map((r) => rows[rowOf.get(occurrenceKey(r.issue_id, r.trace_id, r.span_id))!]).sort((a, b) => a.input - b.input);
  for (const row of newRows) {
    results[row.input].attached++;
    const at = row.o.occurredAt.getTime();
    const t = touched.get(row.issueId) ?? { n: 0, earliest: at, latest: at, reopenedBy: -1 };
    t.n++;
    t.earliest = Math.min(t.earliest, at);
    t.latest = Math.max(t.latest, at);
    const issue = issueOf(row.trace);
    if (t.reopenedBy < 0 && issue.status === 'resolved' && (!issue.resolved_at || at > issue.resolved_at.getTime())) t.reopenedBy = row.input;
    touched.set(row.issueId, t);
  }
  if (touched.size > 0) {
    // Times as text: postgres.js types an array parameter by its first element, and sends an array of Dates (or booleans) as one scalar.
    const changes = [...touched.entries()];
    const reopened = changes.filter(([, t]) => t.reopenedBy >= 0).map(([id]) => id);
    await tx`
      update issues i set
        occurrence_count = i.occurrence_count + u.n,
        first_seen_at = least(coalesce(i.first_seen_at, u.earliest), u.earliest),
        last_seen_at = greatest(coalesce(i.last_seen_at, u.latest), u.latest),
        status = case when i.id = any(${reopened}::uuid[]) then 'open' else i.status end,
        resolved_at = case when i.id = any(${reopened}::uuid[]) then null else i.resolved_at end,
        occurrences_deleted_at = null,
        updated_at = now()
      from unnest(${changes.map(([id]) => id)}::uuid[], ${changes.map(([, t]) => t.n)}::int[],
        ${changes.map(([, t]) => new Date(t.earliest).toISOString())}::timestamptz[], ${changes.map(([, t]) => new Date(t.latest).toISOString())}::timestamptz[]) as u(id, n, earliest, latest)
      where i.id = u.id`;
  }
  const events = createdEvents(inputs, results, issues);
  inputs.forEach((input, i) => {
    const issueId = results[i].issueId;
    if (touched.get(issueId)?.reopenedBy === i) {
      events.push({ order: i, event: { tenantId: input.tenantId, projectId: input.projectId, issueId, name: 'issue.reopened', actor: SYSTEM_ORIGIN } });
    }
  });
  await recordIssueEvents(tx, events.sort((a, b) => a.order - b.order).map((e) => e.event));
  return { results, events: events.length };
}
