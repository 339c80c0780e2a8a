import { ConflictError, NotFoundError } from '../../platform/http/errors.js';
import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import { recordIssueEvent, type IssueEventName } from './issue-event-outbox.js';
import { findIssueRow, ISSUE_COLUMNS } from './issue-store.js';
import { isTerminal, type IssueRow, type IssueStatus } from './issue-types.js';
import type { Origin } from '../../spans/origin.js';
import type { IssueStartReview } from './issue-schemas.js';

export const ISSUE_TERMINAL_CONFLICT = 'issue_terminal_conflict';

/** The state after start-review (issue-schemas.ts). */
export type StartReviewResult = IssueStartReview;

/**
 * Starting a review: open → in_progress with the assignee set to the acting user only
 * when unassigned, in ONE conditional UPDATE (`where status = 'open'`). Concurrent callers queue on
 * the row lock; after the first commits, the others re-check the condition against the new row,
 * match nothing, and fall through to "in_progress: returned unchanged". So exactly one caller
 * moves the issue, sets the assignee and records issue.review_started.
 */
export async function startReview(sql: Sql, tenantId: string, issueId: string, actor: Origin, actingUserId: string | null): Promise<StartReviewResult> {
  return sql.begin(async (tx) => {
    const [moved] = await tx<(StartReviewResult & { updated_at: Date })[]>`
      update issues set status = 'in_progress', assignee_user_id = coalesce(assignee_user_id, ${actingUserId}::uuid), updated_at = now()
      where tenant_id = ${tenantId} and id = ${issueId} and status = 'open'
      returning project_id, status, assignee_user_id, updated_at`;
    if (moved) {
      await recordIssueEvent(tx, { tenantId, projectId: moved.project_id, issueId, name: 'issue.review_started', actor, occurredAt: moved.updated_at });
      return { project_id: moved.project_id, status: moved.status, assignee_user_id: moved.assignee_user_id };
    }
    const current = await findIssueRow(tx, tenantId, issueId);
    if (!current) throw new NotFoundError('Issue not found');
    if (isTerminal(current.status)) {
      throw new ConflictError(`Issue is ${current.status}; reopen it before starting a review`, ISSUE_TERMINAL_CONFLICT);
    }
    return { project_id: current.project_id, status: current.status, assignee_user_id: current.assignee_user_id };
  });
}

export type TransitionName = 'resolve' | 'dismiss' | 'reopen' | 'flag' | 'unflag';

interface Move {
  /** What the row becomes; null = already there, returned unchanged without an event. */
  set: { status?: IssueStatus; flagged?: boolean } | null;
  event: IssueEventName;
}

/**
 * The other moves (docs/issues.md "States"): resolve and dismiss leave open or
 * in_progress; each is a no-op on its own terminal state and a 409 issue_terminal_conflict on the
 * other (reopen first); reopen brings a terminal issue back to open; flag/unflag work in any state.
 * Repeating a transition changes nothing and records nothing, so client retries are safe.
 */
function planMove(name: TransitionName, row: IssueRow): Move {
  switch (name) {
    case 'resolve':
      if (row.status === 'dismissed') throw new ConflictError('Issue is dismissed; reopen it before resolving', ISSUE_TERMINAL_CONFLICT);
      return { set: row.status === 'resolved' ? null : { status: 'resolved' }, event: 'issue.resolved' };
    case 'dismiss':
      if (row.status === 'resolved') throw new ConflictError('Issue is resolved; reopen it before dismissing', ISSUE_TERMINAL_CONFLICT);
      return { set: row.status === 'dismissed' ? null : { status: 'dismissed' }, event: 'issue.dismissed' };
    case 'reopen':
      return { set: isTerminal(row.status) ? { status: 'open' } : null, event: 'issue.reopened' };
    case 'flag':
      return { set: row.flagged ? null : { flagged: true }, event: 'issue.flagged' };
    case 'unflag':
      return { set: row.flagged ? { flagged: false } : null, event: 'issue.unflagged' };
    default: {
      const never: never = name;
      throw new Error(`unknown transition ${String(never)}`);
    }
  }
}

/** Applies a transition under the row lock and records its event in the same transaction. */
export async function applyTransition(sql: Sql, tenantId: string, issueId: string, name: TransitionName, actor: Origin): Promise<{ row: IssueRow; changed: boolean }> {
  return sql.begin((tx) => transitionIn(tx, tenantId, issueId, name, actor));
}

/** applyTransition inside a caller's transaction (PATCH combines an edit with flag/unflag). */
export async function transitionIn(tx: SqlHandle, tenantId: string, issueId: string, name: TransitionName, actor: Origin): Promise<{ row: IssueRow; changed: boolean }> {
  const row = await findIssueRow(tx, tenantId, issueId, { forUpdate: true });
  if (!row) throw new NotFoundError('Issue not found');
  const move = planMove(name, row);
  if (!move.set) return { row, changed: false };
  const status = move.set.status ?? row.status;
  const [updated] = await tx<IssueRow[]>`
    update issues set status = ${status}, flagged = ${move.set.flagged ?? row.flagged},
      resolved_at = ${status === 'resolved' ? tx`now()` : status === row.status ? tx`resolved_at` : null},
      updated_at = now()
    where id = ${row.id}
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  await recordIssueEvent(tx, { tenantId, projectId: row.project_id, issueId: row.id, name: move.event, actor, occurredAt: updated.updated_at });
  return { row: updated, changed: true };
}
