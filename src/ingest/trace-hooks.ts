import type { IssueExtraction, TraceIssueOccurrence } from './trace-hook-shapes.js';

/**
 * The seam between ingestion and the workspace: ingestion announces each processed trace, and the
 * issues and monitors modules listen; the traces API asks the issues module for a trace's
 * extraction status and occurrences. Modules register in their init() (trace-hook-registry.ts), so
 * ingestion never imports them. Plain data and listener shapes only: the compute workers import
 * these types, and nothing here reaches app-deps.
 */

/** A failed span of a processed trace, as issue extraction and monitors see it. */
export interface TraceFailure {
  span_id: string;
  span_name: string;
  /** exception.type / error.type of the span, '' when none. */
  error_type: string;
  /** status description or exception message, '' when none. */
  message: string;
  /** Set when the failed span is a tool call. */
  tool_name: string;
  timestamp: string;
}

export interface ProcessedTrace {
  tenantId: string;
  projectId: string;
  /** Lookout trace UUID. */
  traceId: string;
  otelTraceId: string;
  timestamp: string;
  agentName: string;
  hasError: boolean;
  failures: TraceFailure[];
  toolCalls: { span_id: string; name: string; is_error: boolean; duration_ms: number; input: string; output: string }[];
  agentInput: string | null;
  agentOutput: string | null;
  /**
   * Span attributes by span id, for monitors that match on attributes; null when no listener wanted
   * them for the trace's project as its round settled (TraceHooks.spanAttributesWanted).
   */
  spanAttributes: Record<string, Record<string, unknown>> | null;
}

export type { IssueExtraction, TraceIssueOccurrence };

export interface TraceHooks {
  /**
   * Called with a group of processed traces (part of one settling round) after their trace.processed
   * rows are written (each trace once per (re)processing): for work that a few statements do for many
   * traces (issue extraction and monitors listen this way, a fixed number of PostgreSQL statements
   * per group). Must be idempotent.
   */
  onTracesProcessed: ((traces: ProcessedTrace[]) => Promise<void>)[];
  /**
   * Whether a listener reads the span attributes of this project's traces, asked once per project
   * as a settle round starts; absent: always. Other projects' payloads carry none (null): the
   * attributes are most of a payload, copied back from the compute pool and held in the hook queue,
   * and most projects have no listener that reads them.
   */
  spanAttributesWanted?: (tenantId: string, projectId: string) => Promise<boolean>;
  /** Filled by the issues module; until then traces report extraction 'pending'. */
  issueExtraction?: (tenantId: string, projectId: string, traceId: string) => Promise<IssueExtraction | null>;
  traceOccurrences?: (tenantId: string, projectId: string, traceId: string) => Promise<TraceIssueOccurrence[]>;
}
