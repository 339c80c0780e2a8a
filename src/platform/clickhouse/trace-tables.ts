/**
 * Every ClickHouse table that holds rows of a trace, in one place, with how it stores the trace id.
 * A deletion removes a trace from each of them (src/lifecycle/), so a table added later that keeps
 * per-trace data (a search index, a content table) is deleted from once it is listed here; a unit
 * test fails while a migration creates a table with a `trace_id` column that is not listed.
 *
 * `text`: the trace UUID as text (String); `uuid`: a UUID column (the per-span event tables since
 * migration 009, src/platform/clickhouse/sql/event-ids.ts).
 */
export type TraceIdColumn = 'text' | 'uuid';

export const TRACE_TABLES: Readonly<Record<string, TraceIdColumn>> = Object.freeze({
  spans: 'text',
  span_logs: 'text',
  traces: 'text',
  // Search's text of a trace (clickhouse/014_trace_content.sql, docs/search.md).
  trace_content: 'text',
  event_trace_processed: 'text',
  event_generation_completed: 'uuid',
  event_tool_called: 'uuid',
  event_span_errored: 'uuid',
});

/**
 * Tables of a project that are not per trace, and what a project's deletion also removes: issue
 * events carry no trace (they describe issues, which go with the project's PostgreSQL rows).
 */
export const PROJECT_ONLY_TABLES: readonly string[] = Object.freeze(['event_issue']);

export const traceTableNames = (): string[] => Object.keys(TRACE_TABLES);
