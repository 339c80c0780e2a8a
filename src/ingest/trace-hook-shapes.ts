/**
 * The answers the issues module gives the traces API through the trace hooks (trace-hooks.ts),
 * declared once as TypeBox schemas: the hook's types and the parts of the trace detail answer that
 * carry them. This file imports nothing of the server, so the dashboard's type check can read it.
 */
import { Type, type Static } from 'typebox';
import { dateTime, nullable } from '../platform/http/shape-kit.js';

/** How far issue extraction got with a trace (pending until the issues module reports). */
export const IssueExtraction = Type.Object({
  status: Type.String(),
  reason: Type.String(),
  issue_count: Type.Integer(),
  occurrence_count: Type.Integer(),
  completed_at: nullable(dateTime),
});
export type IssueExtraction = Static<typeof IssueExtraction>;

/** An issue occurrence as the context bundle lists it for its trace. */
export const TraceIssueOccurrence = Type.Object({
  issue_id: Type.String(),
  issue_title: Type.String(),
  issue_status: Type.String(),
  span_id: Type.String(),
  occurred_at: Type.String(),
});
export type TraceIssueOccurrence = Static<typeof TraceIssueOccurrence>;
