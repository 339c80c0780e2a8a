import type { ProcessedTrace } from '../trace-hooks.js';
import { approximateBytes } from './approximate-bytes.js';
import {
  contentValues, encodeBody, generationRowsToWrite, generationValues, processedValues, storedRowsFromSpanLines, toolValues, traceValues, type SettleTable,
} from '../write/encoded-rows.js';
import type { GenerationCompletedRow, ToolCalledRow } from '../../spans/event-rows.js';
import { processedTrace } from './processed-trace.js';
import { unpackToolRows, type PackedToolRow } from '../write/packed-tool-rows.js';
import { packHook, type PackedHook } from './packed-hook.js';
import { spanFromStoredRow, storedRowsFromBytes, traceKeyString, type StoredSpanRow, type StoredTraceSpans } from '../../spans/stored-spans.js';
import { logRecordsBySpan, spanLogKey } from '../../spans/span-log-records.js';
import { summarizeTrace, type TraceProcessedRow, type TraceRow, type TraceSummary } from '../../spans/trace-summary.js';
import { traceContentRows, type TraceContentRow } from '../../spans/trace-content.js';
import type { NormalizedSpan } from '../../spans/normalized-span.js';
import type { Origin } from '../../spans/origin.js';
import type { PriceTrace } from '../../spans/trace-pricing.js';
import type { SharedValueRef } from '../../platform/compute/shared-value.js';
import { computeTask } from '../../platform/compute/compute-task.js';

/**
 * The settler's CPU work, run on the compute pool (src/platform/compute/): spans of settled traces →
 * summary rows (priced, and serialized as the insert bodies, encodeBody), the tool.called and
 * generation.completed rows the whole trace changes, and the hook payload. Pure; the settler reads the spans, writes the
 * lines and runs the hooks, so neither pricing nor JSON of rows runs on the event loop.
 *
 * Spans arrive as the `spans` rows written at ingest (memory path: JSONCompactEachRow lines,
 * encoded-rows.ts) or as the JSONEachRow text ClickHouse returned for a read-back (as bytes): both
 * are flat data that is cheap to hand to a thread.
 */

export interface SettleTraceInput {
  /** traceKeyString of the trace. */
  key: string;
  origin: Origin;
  /** Memory path: the trace's `spans` rows (JSONCompactEachRow lines) as this process wrote them, as bytes. Absent: read back (`stored`). */
  rows?: Uint8Array;
  /** Memory path: the tool.called rows written at ingest (packed), to rewrite only what the whole trace changes. */
  writtenTools?: PackedToolRow[];
  /** Memory path: the generation.completed rows written at ingest (JSONCompactEachRow lines), likewise. */
  writtenGenerations?: Uint8Array;
}

export interface SettleSummariesInput {
  processedAt: string;
  traces: SettleTraceInput[];
  /** JSONEachRow bytes of STORED_SPAN_COLUMNS holding the spans of every trace without `rows`. */
  stored?: Uint8Array;
  /** JSONEachRow bytes of STORED_LOG_COLUMNS: the log records of these traces' spans (span-log-records.ts). */
  logs?: Uint8Array;
  /** The price catalog shared with the pool (TracePricing); absent or null: costs `unavailable`. */
  prices?: SharedValueRef | null;
  /** Projects (`tenant\0project`) whose hook payloads carry span attributes (TraceHooks.spanAttributesWanted); absent: every one. */
  attributesFor?: string[];
}

export interface SettledTrace {
  /** The hook payload, packed for the trip to the event loop (unpackHook there). */
  hook: PackedHook;
  /** approximateBytes of the payload, measured here on the pool rather than on the event loop. */
  hookBytes: number;
}

/**
 * What one task settled: the rows of all its traces as one insert body per table (encodeBody:
 * JSONCompactEachRow of SETTLE_COLUMNS[table]; empty when the table gets no row), and per trace its
 * hook payload. Bodies rather than a string per row: they cross to the event loop as one copy each,
 * are inserted as they are, and the engine reads arrays of values without matching field names.
 */
export interface SettledRound {
  bodies: Record<SettleTable, Uint8Array>;
  traces: SettledTrace[];
  /** Model-call spans below the span holding their call's row (stale-call-rows.ts): none of them may keep a row. */
  innerCalls: InnerCallSpan[];
}

/**
 * A model-call span that holds no generation.completed row (its call's row is at an outer span): its
 * key and `timestamp`, what a row it held would be keyed by — not the whole span, which would cross
 * back from the pool with its attributes.
 */
export type InnerCallSpan = Pick<NormalizedSpan, 'tenantId' | 'projectId' | 'traceId' | 'spanId' | 'timestamp'>;

/** A task's rows by table, collected trace by trace. */
class SettleRows {
  readonly tools: ToolCalledRow[] = [];
  readonly generations: GenerationCompletedRow[] = [];
  readonly processed: TraceProcessedRow[] = [];
  readonly summaries: TraceRow[] = [];
  readonly content: TraceContentRow[] = [];
  readonly traces: SettledTrace[] = [];
  readonly innerCalls: InnerCallSpan[] = [];

  add(summary: Omit<TraceSummary, 'tree'>, toolRewrites: ToolCalledRow[], generationRewrites: GenerationCompletedRow[], hook: ProcessedTrace, spans: NormalizedSpan[]): void {
    for (const r of toolRewrites) this.tools.push(r);
    for (const r of generationRewrites) this.generations.push(r);
    this.processed.push(summary.processed);
    this.summaries.push(summary.trace);
    for (const r of traceContentRows(spans, { timestamp: summary.trace.timestamp, processedAt: summary.trace.processed_at })) this.content.push(r);
    this.traces.push({ hook: packHook(hook), hookBytes: approximateBytes(hook) });
    // An inner span of a call may hold a row an earlier settle wrote before the call's outer span arrived.
    for (const span of summary.innerCalls) {
      this.innerCalls.push({ tenantId: span.tenantId, projectId: span.projectId, traceId: span.traceId, spanId: span.spanId, timestamp: span.timestamp });
    }
  }

  round(): SettledRound {
    return {
      bodies: {
        event_tool_called: encodeBody(this.tools, toolValues),
        event_generation_completed: encodeBody(this.generations, generationValues),
        event_trace_processed: encodeBody(this.processed, processedValues),
        traces: encodeBody(this.summaries, traceValues),
        trace_content: encodeBody(this.content, contentValues),
      },
      traces: this.traces,
      innerCalls: this.innerCalls,
    };
  }
}

/**
 * settleSummaries on the compute pool, priced on the worker with the catalog the input shares
 * (the composition root binds it: ingestion does not import the cost module).
 */
export const settleSummariesTask = computeTask<SettleSummariesInput, SettledRound>('settle-summaries');

/** `priceTrace`: the cost module's pricing over the shared catalog (compute-tasks.ts resolves `input.prices`). */
export function settleSummaries(input: SettleSummariesInput, priceTrace?: PriceTrace): SettledRound {
  const options = { processedAt: input.processedAt, priceTrace };
  const logs = logRecordsBySpan(input.logs);
  const withLogs = (row: StoredSpanRow) => spanFromStoredRow(row, logs.size === 0 ? undefined : logs.get(spanLogKey(row.tenant_id, row.project_id, row.trace_id, row.span_id)));
  // Read-back rows, grouped by trace; a copy of a span left by a concurrent writer elsewhere is
  // dropped by span id (cheaper than FINAL over the whole table).
  const stored = new Map<string, StoredTraceSpans>();
  if (input.stored) {
    for (const row of storedRowsFromBytes(input.stored)) {
      const key = traceKeyString({ tenantId: row.tenant_id, projectId: row.project_id, traceId: row.trace_id });
      let entry = stored.get(key);
      if (!entry) stored.set(key, (entry = { spans: [], ingestAgentNames: new Map() }));
      if (entry.ingestAgentNames.has(row.span_id)) continue;
      entry.ingestAgentNames.set(row.span_id, row.agent_name);
      entry.spans.push(withLogs(row));
    }
  }
  const out = new SettleRows();
  const attributesFor = input.attributesFor && new Set(input.attributesFor);
  // The trace key is `tenant\0project\0trace`: its project part names the project.
  const withAttributes = (key: string) => !attributesFor || attributesFor.has(key.slice(0, key.lastIndexOf('\u0000')));
  for (const t of input.traces) {
    if (t.rows) {
      if (t.rows.byteLength === 0) continue;
      const spans = storedRowsFromSpanLines(t.rows).map(withLogs);
      const { tree: _tree, ...summary } = summarizeTrace(spans, { ...options, origin: t.origin });
      const written = new Map(unpackToolRows(t.writtenTools ?? []).map((r) => [r.span_id, r]));
      const toolRewrites: ToolCalledRow[] = [];
      for (const row of summary.tools) {
        const before = written.get(row.span_id);
        // Keep who recorded the call: only the derived fields change.
        if (!before) toolRewrites.push(row);
        else if (before.agent_name !== row.agent_name || before.output_tokens !== row.output_tokens) {
          toolRewrites.push({ ...row, actor: before.actor, surface: before.surface, user_id: before.user_id, api_key_id: before.api_key_id });
        }
      }
      const generationRewrites = generationRowsToWrite(summary.generations, t.writtenGenerations ?? new Uint8Array(0));
      out.add(summary, toolRewrites, generationRewrites, processedTrace(summary, spans, withAttributes(t.key)), spans);
      continue;
    }
    const entry = stored.get(t.key);
    if (!entry || entry.spans.length === 0) continue;
    const full = summarizeTrace(entry.spans, { ...options, origin: t.origin });
    const { tree: _tree, ...summary } = full;
    // What ingest wrote is not known here: every row the whole trace may change is written again.
    out.add(summary, toolRowsToRewrite(full, entry.ingestAgentNames), summary.generations, processedTrace(summary, entry.spans, withAttributes(t.key)), entry.spans);
  }
  return out.round();
}

/**
 * tool.called rows the whole trace changes. At ingest a tool span's agent came from its own
 * request (stored as the span's agent_name), falling back to that request's view of the trace when
 * no ancestor was in it; its output tokens from the usage below it in that request. Rewritten here
 * (same key, newer inserted_at replaces the row) when the agent was not resolved at ingest or differs
 * now, or when usage below the tool may have arrived separately.
 */
export function toolRowsToRewrite(summary: TraceSummary, ingestAgentNames: Map<string, string>): ToolCalledRow[] {
  const { tree } = summary;
  return summary.tools.filter((row) => {
    const atIngest = ingestAgentNames.get(row.span_id) ?? '';
    if (atIngest === '' || atIngest !== row.agent_name) return true;
    const span = tree.byId.get(row.span_id);
    return span !== undefined && row.output_tokens !== (span.outputTokens ?? 0);
  });
}
