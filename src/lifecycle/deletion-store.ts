/**
 * Deletion jobs in PostgreSQL (sql/025_deletion_jobs.sql): created by a request, claimed by any
 * process's runner with FOR UPDATE SKIP LOCKED and a lease (the settle queue's pattern), their
 * progress committed after each batch, finished once everything of the selection is gone.
 */
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { isUuid } from '../platform/uuid.js';
import type { Origin } from '../spans/origin.js';
import type { Deletion } from './deletion-schemas.js';

export type DeletionKind = Deletion['kind'];

/** What a job deletes: one of the four selections. */
export type Selection =
  | { kind: 'traces'; traceIds: string[] }
  | { kind: 'thread'; threadId: string }
  | { kind: 'before'; before: Date }
  | { kind: 'project' };

export interface DeletionRow {
  id: string;
  tenant_id: string;
  project_id: string;
  kind: DeletionKind;
  trace_ids: string[] | null;
  thread_id: string | null;
  before: Date | null;
  status: Deletion['status'];
  actor: string;
  surface: string;
  user_id: string;
  api_key_id: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  traces_deleted: string;
  rows_deleted: Record<string, number>;
  issues_emptied: number;
  attempts: number;
  last_error: string | null;
}

const COLUMNS = `id, tenant_id, project_id, kind, trace_ids, thread_id, before, status, actor, surface, user_id, api_key_id,
  created_at, started_at, finished_at, traces_deleted::text as traces_deleted, rows_deleted, issues_emptied, attempts, last_error`;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toDeletion(row: DeletionRow): Deletion {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind,
    trace_ids: row.trace_ids,
    thread_id: row.thread_id,
    before: iso(row.before),
    status: row.status,
    requested_by: { actor: row.actor, surface: row.surface, user_id: row.user_id, api_key_id: row.api_key_id },
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    traces_deleted: Number(row.traces_deleted),
    rows_deleted: row.rows_deleted,
    issues_emptied: row.issues_emptied,
    attempts: row.attempts,
    last_error: row.last_error,
  };
}

export function selectionOf(row: Pick<DeletionRow, 'kind' | 'trace_ids' | 'thread_id' | 'before'>): Selection {
  switch (row.kind) {
    case 'traces':
      return { kind: 'traces', traceIds: row.trace_ids ?? [] };
    case 'thread':
      return { kind: 'thread', threadId: row.thread_id ?? '' };
    case 'before':
      return { kind: 'before', before: row.before ?? new Date(0) };
    case 'project':
      return { kind: 'project' };
    default: {
      const never: never = row.kind;
      throw new Error(`unknown deletion kind ${String(never)}`);
    }
  }
}

export async function insertDeletion(sql: SqlHandle, job: { id: string; tenantId: string; projectId: string; selection: Selection; origin: Origin }): Promise<DeletionRow> {
  const s = job.selection;
  const [row] = await sql<DeletionRow[]>`
    insert into deletion_jobs (id, tenant_id, project_id, kind, trace_ids, thread_id, before, actor, surface, user_id, api_key_id)
    values (${job.id}, ${job.tenantId}, ${job.projectId}, ${s.kind},
      ${s.kind === 'traces' ? sql`${s.traceIds}::uuid[]` : null}, ${s.kind === 'thread' ? s.threadId : null},
      ${s.kind === 'before' ? s.before.toISOString() : null},
      ${job.origin.actor}, ${job.origin.surface}, ${job.origin.user_id}, ${job.origin.api_key_id})
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

export async function findDeletion(sql: SqlHandle, tenantId: string, id: string): Promise<DeletionRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await sql<DeletionRow[]>`select ${sql.unsafe(COLUMNS)} from deletion_jobs where tenant_id = ${tenantId} and id = ${id}`;
  return row ?? null;
}

/** A project's jobs, newest first. */
export async function listDeletions(sql: SqlHandle, tenantId: string, projectId: string, limit: number): Promise<DeletionRow[]> {
  return sql<DeletionRow[]>`
    select ${sql.unsafe(COLUMNS)} from deletion_jobs
    where tenant_id = ${tenantId} and project_id = ${projectId}
    order by seq desc limit ${limit}`;
}

/** A claimed job: its row and the claim's token. */
export interface ClaimedDeletion {
  row: DeletionRow;
  token: string;
}

/**
 * Claims the oldest job not finished and not under a live lease (a queued job, or one whose runner
 * died), in one statement: the row lock of FOR UPDATE SKIP LOCKED is held only by that statement, the
 * lease keeps other runners off for as long as it is renewed.
 */
export async function claimDeletion(sql: SqlHandle, token: string, leaseMs: number): Promise<ClaimedDeletion | null> {
  const [row] = await sql<DeletionRow[]>`
    update deletion_jobs j set claim_token = ${token}, lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond',
      status = 'running', started_at = coalesce(j.started_at, now()), attempts = j.attempts + 1
    where j.id = (
      select id from deletion_jobs
      where status <> 'succeeded' and (lease_until is null or lease_until < now())
      order by seq limit 1 for update skip locked)
    returning ${sql.unsafe(COLUMNS)}`;
  return row ? { row, token } : null;
}

/** Extends the lease while the claim is still this runner's; false when it was lost (expired and taken over). */
export async function renewDeletion(sql: SqlHandle, claim: ClaimedDeletion, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    update deletion_jobs set lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond'
    where id = ${claim.row.id} and claim_token = ${claim.token} and status = 'running' returning id`;
  return rows.length > 0;
}

/** One batch's progress, added to the job's totals while the claim is still this runner's. */
export interface BatchProgress {
  traces: number;
  rows: Record<string, number>;
  issuesEmptied: number;
}

export async function recordProgress(sql: SqlHandle, claim: ClaimedDeletion, progress: BatchProgress): Promise<boolean> {
  const rows = JSON.stringify(progress.rows);
  const updated = await sql`
    update deletion_jobs j set traces_deleted = j.traces_deleted + ${progress.traces},
      issues_emptied = j.issues_emptied + ${progress.issuesEmptied},
      rows_deleted = (
        select coalesce(jsonb_object_agg(k, coalesce((j.rows_deleted ->> k)::bigint, 0) + coalesce((${rows}::text::jsonb ->> k)::bigint, 0)), '{}'::jsonb)
        from (select jsonb_object_keys(j.rows_deleted) as k union select jsonb_object_keys(${rows}::text::jsonb)) as keys)
    where j.id = ${claim.row.id} and j.claim_token = ${claim.token} returning j.id`;
  return updated.length > 0;
}

export async function finishDeletion(sql: SqlHandle, claim: ClaimedDeletion): Promise<boolean> {
  const rows = await sql`
    update deletion_jobs set status = 'succeeded', finished_at = now(), claim_token = null, lease_until = null, last_error = null
    where id = ${claim.row.id} and claim_token = ${claim.token} returning id`;
  return rows.length > 0;
}

/** A failed attempt: the error is recorded and the job freed for the next attempt after `retryMs`. */
export async function failDeletion(sql: SqlHandle, claim: ClaimedDeletion, error: string, retryMs: number): Promise<void> {
  await sql`
    update deletion_jobs set last_error = ${error.slice(0, 2000)}, claim_token = null,
      lease_until = now() + ${retryMs}::bigint * interval '1 millisecond'
    where id = ${claim.row.id} and claim_token = ${claim.token}`;
}

/** Frees a claim at shutdown so another process (or the next start) resumes the job at once. */
export async function releaseDeletion(sql: SqlHandle, claim: ClaimedDeletion): Promise<void> {
  await sql`update deletion_jobs set claim_token = null, lease_until = null where id = ${claim.row.id} and claim_token = ${claim.token}`;
}
