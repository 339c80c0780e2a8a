import { readAgentInput } from './agent-io.js';
import { nsToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { generationRow, toolCalledRow, type GenerationCompletedRow, type ToolCalledRow } from './event-rows.js';
import { resolveModelCalls, type ModelCalls } from './model-calls.js';
import { compareNs, type NormalizedSpan } from './normalized-span.js';
import { buildSpanTree, type SpanTree } from './span-tree.js';
import { extractUserFacingMessage } from './user-facing-message.js';
import type { Origin } from './origin.js';
import { UNPRICED, type GenerationUsage, type PriceTrace, type TraceCost, type TraceUsage } from './trace-pricing.js';

/**
 * Trace summarization at settling: all spans of one trace → one `event_trace_processed` row
 * (the trace.processed event) and one `traces` row (the stored trace summary). Pure: the settler reads the spans, calls summarizeTrace, writes the rows.
 *
 * Cost hook: `options.priceTrace`, when given (the cost module, src/cost/), receives the
 * trace's counted usage per generation and returns the stored estimate; without it the cost
 * columns say 'unavailable' and stay null/empty.
 */

export interface ToolCallSummary {
  span_id: string;
  name: string;
  duration_ms: number;
  is_error: boolean;
  user_facing_message: string;
  user_facing_message_truncated: boolean;
  user_facing_messages_omitted: number;
}

export interface Interaction {
  has_input: boolean;
  has_output: boolean;
  input_kind: string;
  has_user_message_tools: boolean;
}

export interface StatsToolCall {
  name: string;
  otel_span_id: string;
  /** 'error' when the tool span failed, else 'ok'. */
  status: string;
}

export interface TraceProcessedRow extends Origin, TraceCost {
  tenant_id: string;
  project_id: string;
  timestamp: string;
  trace_id: string;
  agent_name: string;
  root_status_code: string;
  has_root: number;
  root_duration_ms: number | null;
  error_count: number;
  failing_tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  models: string[];
  /** Model calls of the run (its generation.completed rows) and those naming their provider; its tool spans (docs/analytics.md "Coverage"). */
  generations: number;
  generations_with_provider: number;
  tool_calls: number;
  processed_at: string;
}

export interface TraceRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  otel_trace_id: string;
  timestamp: string;
  service_name: string;
  agent_name: string;
  thread_id: string;
  release: string;
  agent_input_display: string;
  agent_input: string | null;
  agent_output: string | null;
  /** JSON of ToolCallSummary[]. */
  tool_calls: string;
  /** JSON of Interaction. */
  interaction: string;
  has_error: number;
  total_duration_ms: number;
  span_count: number;
  total_tokens: number;
  error_count: number;
  models_used: string[];
  /** JSON of StatsToolCall[]. */
  stats_tool_calls: string;
  estimated_cost_usd: number | null;
  processed_at: string;
}

export interface TraceSummary {
  processed: TraceProcessedRow;
  trace: TraceRow;
  /** tool.called rows recomputed with the whole trace known (agent, tokens below the tool). */
  tools: ToolCalledRow[];
  /**
   * generation.completed rows the whole trace may change (model-calls.ts): calls seen by more than
   * one span (usage completed across requests) and calls whose outermost span has a parent (its
   * ancestry may have been open in its request, which then wrote no row).
   */
  generations: GenerationCompletedRow[];
  /** Model-call spans below their call's outermost span: the call's row is not theirs (model-calls.ts). */
  innerCalls: NormalizedSpan[];
  usage: TraceUsage;
  tree: SpanTree;
}

export interface SummarizeOptions {
  origin: Origin;
  /**
   * processed_at (DateTime64 text, UTC): the version of the rows; a newer processing of the same
   * trace replaces the older row (ReplacingMergeTree). The settler uses the settle version its
   * claim took from PostgreSQL (docs/settling.md), never a process's own clock.
   */
  processedAt: string;
  priceTrace?: PriceTrace;
}

/** At most this many user-facing messages are carried per trace; later calls count as omitted. */
export const MAX_USER_FACING_MESSAGES = 50;

function byStart(a: NormalizedSpan, b: NormalizedSpan): number {
  return compareNs(a.startNs, b.startNs);
}

/** Spans shallowest first, then earliest first: "root-most" order for picking trace-level values. */
function rootMost(tree: SpanTree): NormalizedSpan[] {
  return [...tree.spans].sort((a, b) => tree.depth(a) - tree.depth(b) || byStart(a, b));
}

/**
 * The trace's agent: the root-most agent-invocation span that names one (invoke_agent,
 * create_agent, OpenInference AGENT, the AI SDK's generateText/streamText: attribute-mapping
 * AGENT_INVOCATION_MARKERS), else the root-most span that names one, else the root's service name,
 * so every trace has an agent to group by. Invocation spans first because some instrumentations
 * put a placeholder agent name on every span and the real one only on the invocation.
 */
export function traceAgentName(tree: SpanTree, ordered = rootMost(tree)): string {
  for (const s of ordered) if (s.agentInvocation && s.agentName !== '') return s.agentName;
  for (const s of ordered) if (s.agentName !== '') return s.agentName;
  const root = tree.roots[0] ?? ordered[0];
  return root ? root.serviceName : '';
}

function pickInput(ordered: NormalizedSpan[]): string | null {
  // The root's own input, else an agent span's, else the first non-tool span that has one
  // (typically the first model call, whose messages hold the user's request).
  const candidates = [
    ...ordered.filter((s) => s.parentSpanId === ''),
    ...ordered.filter((s) => s.spanClass === 'agent'),
    ...ordered.filter((s) => s.spanClass !== 'tool'),
  ];
  for (const s of candidates) if (s.agentInput !== null) return s.agentInput;
  return null;
}

function pickOutput(ordered: NormalizedSpan[]): string | null {
  const roots = ordered.filter((s) => s.parentSpanId === '');
  const agents = ordered.filter((s) => s.spanClass === 'agent');
  // The last model call to finish holds the final answer.
  const generations = ordered.filter((s) => s.spanClass === 'generation').sort((a, b) => byStart(b, a));
  for (const s of [...roots, ...agents, ...generations]) if (s.agentOutput !== null) return s.agentOutput;
  return null;
}

/** Model calls are exactly the calls written as generation.completed rows (event-rows.ts, model-calls.ts). */
function runCoverageCounts(calls: ModelCalls): { generations: number; generations_with_provider: number } {
  let withProvider = 0;
  for (const call of calls.holders.values()) if (call.provider !== '') withProvider++;
  return { generations: calls.holders.size, generations_with_provider: withProvider };
}

export function summarizeTrace(spans: NormalizedSpan[], options: SummarizeOptions): TraceSummary {
  if (spans.length === 0) throw new Error('summarizeTrace needs at least one span');
  const tree = buildSpanTree(spans);
  const ordered = rootMost(tree);
  const first = ordered[0];
  const root = tree.roots.length > 0 ? [...tree.roots].sort(byStart)[0] : null;
  const agentName = traceAgentName(tree, ordered);
  const calls = resolveModelCalls(tree, false);

  let inputTokens = 0;
  let outputTokens = 0;
  const generations: GenerationUsage[] = [];
  for (const s of tree.counted) {
    // A counted span that is one of several spans of the same model call takes what it lacks from
    // the call (cached tokens, the model), so the price and the call's row see the same usage.
    const call = calls.callOf(s);
    const input = s.inputTokens ?? call?.inputTokens ?? 0;
    const output = s.outputTokens ?? call?.outputTokens ?? 0;
    const cacheWrite = s.cacheWriteInputTokens ?? call?.cacheWriteInputTokens ?? null;
    inputTokens += input;
    outputTokens += output;
    generations.push({
      span_id: s.spanId,
      model: s.model || (call?.model ?? ''),
      provider: s.provider || (call?.provider ?? ''),
      input_tokens: input,
      output_tokens: output,
      cached_input_tokens: s.cachedInputTokens ?? call?.cachedInputTokens ?? 0,
      ...(cacheWrite !== null ? { cache_write_input_tokens: cacheWrite } : {}),
    });
  }
  const models = [...new Set(spans.filter((s) => s.model !== '' && (s.spanClass === 'generation' || tree.counted.has(s))).map((s) => s.model))].sort();

  const toolSpans = spans.filter((s) => s.spanClass === 'tool').sort(byStart);
  let messagesLeft = MAX_USER_FACING_MESSAGES;
  const toolCalls: ToolCallSummary[] = toolSpans.map((s) => {
    let message = { message: '', truncated: false, omitted: 0 };
    if (s.userFacingTool) {
      const extracted = extractUserFacingMessage(s.toolArguments);
      if (messagesLeft > 0) {
        message = extracted;
        if (extracted.message !== '') messagesLeft--;
      } else if (extracted.message !== '') {
        message = { message: '', truncated: false, omitted: 1 + extracted.omitted };
      }
    }
    return {
      span_id: s.spanId,
      name: s.toolName || s.name,
      duration_ms: s.durationMs,
      is_error: s.statusCode === 'ERROR',
      user_facing_message: message.message,
      user_facing_message_truncated: message.truncated,
      user_facing_messages_omitted: message.omitted,
    };
  });
  const statsToolCalls: StatsToolCall[] = toolSpans.map((s) => ({
    name: s.toolName || s.name,
    otel_span_id: s.spanId,
    status: s.statusCode === 'ERROR' ? 'error' : 'ok',
  }));

  const agentInput = pickInput(ordered);
  const agentOutput = pickOutput(ordered);
  const input = readAgentInput(agentInput);
  const interaction: Interaction = {
    has_input: agentInput !== null,
    has_output: agentOutput !== null,
    input_kind: input.kind,
    has_user_message_tools: toolSpans.some((s) => s.userFacingTool),
  };

  const errorCount = spans.filter((s) => s.statusCode === 'ERROR').length;
  const { timestamp, totalDurationMs } = traceTiming(spans, root);
  const pick = (get: (s: NormalizedSpan) => string) => ordered.map(get).find((v) => v !== '') ?? '';

  const usage: TraceUsage = {
    tenant_id: first.tenantId,
    project_id: first.projectId,
    trace_id: first.traceId,
    timestamp,
    generations,
  };
  const cost = options.priceTrace ? options.priceTrace(usage) : UNPRICED;
  const processedAt = options.processedAt;

  const processed: TraceProcessedRow = {
    tenant_id: first.tenantId,
    project_id: first.projectId,
    timestamp,
    ...options.origin,
    trace_id: first.traceId,
    agent_name: agentName,
    root_status_code: root ? root.statusCode : '',
    has_root: root ? 1 : 0,
    root_duration_ms: root ? root.durationMs : null,
    error_count: errorCount,
    failing_tool_calls: toolSpans.filter((s) => s.statusCode === 'ERROR').length,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    ...cost,
    models,
    ...runCoverageCounts(calls),
    tool_calls: toolSpans.length,
    processed_at: processedAt,
  };
  const trace: TraceRow = {
    tenant_id: first.tenantId,
    project_id: first.projectId,
    trace_id: first.traceId,
    otel_trace_id: first.otelTraceId,
    timestamp,
    service_name: root?.serviceName || pick((s) => s.serviceName),
    agent_name: agentName,
    thread_id: pick((s) => s.threadId),
    release: pick((s) => s.release),
    agent_input_display: input.display,
    agent_input: agentInput,
    agent_output: agentOutput,
    tool_calls: JSON.stringify(toolCalls),
    interaction: JSON.stringify(interaction),
    has_error: errorCount > 0 ? 1 : 0,
    total_duration_ms: totalDurationMs,
    span_count: spans.length,
    total_tokens: inputTokens + outputTokens,
    error_count: errorCount,
    models_used: models,
    stats_tool_calls: JSON.stringify(statsToolCalls),
    estimated_cost_usd: cost.estimated_cost_usd,
    processed_at: processedAt,
  };
  const tools = toolSpans.map((s) => toolCalledRow(s, tree, options.origin, agentName));
  const generationRows: GenerationCompletedRow[] = [];
  const innerCalls: NormalizedSpan[] = [];
  for (const [holder, call] of calls.holders) {
    if (call.spans.length > 1 || holder.parentSpanId !== '') generationRows.push(generationRow(holder, call, options.origin));
    // Outermost first: the rest are the call's inner spans.
    for (let i = 1; i < call.spans.length; i++) innerCalls.push(call.spans[i]);
  }
  return { processed, trace, tools, generations: generationRows, innerCalls, usage, tree };
}

/**
 * A trace's time and duration from its spans: the root's start and duration, else the earliest start
 * to the latest end. The summary and the preview (trace-preview.ts) both use it.
 */
export function traceTiming(spans: readonly NormalizedSpan[], root: NormalizedSpan | null | undefined): { timestamp: string; totalDurationMs: number } {
  let minStart = spans[0].startNs;
  let maxEnd = spans[0].endNs;
  for (const s of spans) {
    if (compareNs(s.startNs, minStart) < 0) minStart = s.startNs;
    if (compareNs(s.endNs, maxEnd) > 0) maxEnd = s.endNs;
  }
  return {
    timestamp: nsToDateTime64(root ? root.startNs : minStart),
    totalDurationMs: root ? root.durationMs : Number(BigInt(maxEnd) - BigInt(minStart)) / 1e6,
  };
}
