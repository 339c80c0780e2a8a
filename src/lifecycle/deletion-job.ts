/**
 * One deletion job, run by whichever process claimed it (deletion-runner.ts). The steps, per batch
 * of traces (a whole project is one batch; a thread or a time selection is found a batch at a time):
 *
 *  1. Settling stops for the batch: its settle-queue rows go, and the job waits while a settle round
 *     in flight still holds one (that round may yet write the trace's summary and occurrences).
 *  2. ClickHouse: the rows each per-trace table holds of the batch are counted, deleted (lightweight
 *     DELETE) and the deletes awaited until applied, so no read sees them any more.
 *  3. PostgreSQL: the per-trace rows (occurrences, extractions, observations, metric values, queue,
 *     registry) in one transaction; issues left with no occurrence are marked.
 *  4. The batch's counts are added to the job, which then takes the next batch or finishes.
 *
 * Every step can run again: a job taken over after a crash starts its batches over, and what is
 * already deleted is neither found nor counted again (reads apply pending deletes). The claim is
 * checked at each commit, so a runner that lost its lease stops instead of writing progress twice.
 */
import type { Logger } from 'pino';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import type { Sql } from '../platform/postgres/postgres.js';
import { countRows, countTraces, deleteRows, nextTraceBatch, type TraceSet } from './clickhouse-trace-data.js';
import { finishDeletion, recordProgress, selectionOf, type ClaimedDeletion } from './deletion-store.js';
import { deletePostgresRows, quiesceSettling } from './postgres-trace-data.js';

export interface DeletionJobSettings {
  /** Traces per batch of a thread or time selection. */
  batchTraces: number;
  /** How long a batch waits for settle rounds in flight, and for ClickHouse to apply its deletes, before the attempt fails (and is retried). */
  waitMs: number;
  /**
   * How long after its creation a project's deletion starts: a write accepted for the project just
   * before it was deleted is stored within INGEST_TIMEOUT_MS of its request (or answered 503 and
   * removed), so the job starts once every such write has landed and deletes it too.
   */
  projectGraceMs: number;
}

export const DEFAULT_JOB_SETTINGS: DeletionJobSettings = { batchTraces: 1000, waitMs: 10 * 60_000, projectGraceMs: 10_000 };

export interface DeletionContext {
  sql: Sql;
  ch: ClickHouseStore;
  logger: Logger;
  settings: DeletionJobSettings;
  /** Set when the process stops: the job ends at its next step and is resumed elsewhere. */
  signal: AbortSignal;
}

/** The runner lost its claim (its lease lapsed and another process took the job). */
export class LostClaimError extends Error {
  constructor() {
    super('the deletion job was taken over by another process');
  }
}

const POLL_MS = 200;

export async function runDeletionJob(ctx: DeletionContext, claim: ClaimedDeletion): Promise<void> {
  const row = claim.row;
  const scope: TenantScope = { tenantId: row.tenant_id, projectId: row.project_id };
  const selection = selectionOf(row);
  if (selection.kind === 'project') {
    const startAt = row.created_at.getTime() + ctx.settings.projectGraceMs;
    await untilDone(ctx, 'writes accepted before the deletion to land', async () => Date.now() >= startAt);
    await deleteBatch(ctx, claim, scope, null);
  } else if (selection.kind === 'traces') {
    await deleteBatch(ctx, claim, scope, selection.traceIds);
  } else {
    const deleted = new Set<string>();
    for (;;) {
      ctx.signal.throwIfAborted();
      const batch = await nextTraceBatch(ctx.ch, scope, selection, row.created_at, ctx.settings.batchTraces);
      if (batch.length === 0) break;
      // A trace found again after its delete applied would make this loop endless: fail the attempt instead.
      if (batch.every((id) => deleted.has(id))) throw new Error(`traces still stored after their deletion applied: ${batch.slice(0, 3).join(', ')}`);
      await deleteBatch(ctx, claim, scope, batch);
      for (const id of batch) deleted.add(id);
    }
  }
  if (!(await finishDeletion(ctx.sql, claim))) throw new LostClaimError();
}

async function deleteBatch(ctx: DeletionContext, claim: ClaimedDeletion, scope: TenantScope, traces: TraceSet): Promise<void> {
  const { tenantId } = scope;
  const projectId = scope.projectId as string;
  await untilDone(ctx, 'settle rounds in flight to end', async () => (await quiesceSettling(ctx.sql, tenantId, projectId, traces)).claimed === 0);
  const storedTraces = await countTraces(ctx.ch, scope, traces);
  const counted = await countRows(ctx.ch, scope, traces);
  // Waited for here briefly, then polled between the job's own checks (it must stop on shutdown):
  // these deletes only, so another mutation of the tables (an operator's ALTER) never holds the job.
  const deletes = await deleteRows(ctx.ch, scope, traces, Math.min(2_000, ctx.settings.waitMs));
  if (!deletes.applied) await untilDone(ctx, 'ClickHouse to apply the deletes', () => deletes.appliedNow());
  const pg = await deletePostgresRows(ctx.sql, tenantId, projectId, traces);
  const recorded = await recordProgress(ctx.sql, claim, { traces: storedTraces, rows: { ...counted, ...pg.rows }, issuesEmptied: pg.issuesEmptied });
  if (!recorded) throw new LostClaimError();
  ctx.logger.info({ deletion_id: claim.row.id, traces: storedTraces, rows: counted }, 'deletion batch done');
}

/** Polls `done` until it holds, the process stops, or the wait bound passes (the attempt fails and is retried). */
async function untilDone(ctx: DeletionContext, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ctx.settings.waitMs;
  for (;;) {
    ctx.signal.throwIfAborted();
    if (await done()) return;
    if (Date.now() >= deadline) throw new Error(`gave up waiting for ${what} after ${ctx.settings.waitMs} ms; retrying`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
