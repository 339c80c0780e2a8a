import type { Logger } from 'pino';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import { fromText, raw, sql } from '../stores/clickhouse-sql/fragment.js';
import { traceKeysGuard } from '../stores/clickhouse-sql/tenant-guard.js';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';
import { msToDateTime64, nsToDateTime64, type EventOrigin, type ToolCalledRow } from './event-rows.js';
import type { TraceNote } from './ingest-writer.js';
import type { NormalizedSpan } from './normalized-span.js';
import { HookRunner } from './hook-runner.js';
import { readTraceSpans, traceKeyString, type TraceKey } from './stored-spans.js';
import { summarizeTrace, type PriceTrace, type TraceSummary } from './trace-summary.js';

/**
 * Trace settling (DESIGN.md "Ingestion"): a trace is processed — one trace.processed row, one
 * traces row, its tool.called rows corrected with the whole trace known — once its root span is
 * stored and no span came for TRACE_SETTLE_MS, or TRACE_MAX_WAIT_MS after its first span. A span
 * arriving later opens the trace again and it is processed again; the newer rows (larger
 * processed_at) replace the older ones, so nothing counts twice.
 *
 * Where the spans come from: the settler keeps the spans of each open trace that came through this
 * process (bounded by `maxCachedSpans`) and summarizes from memory. A trace is read back from
 * ClickHouse instead when part of it is elsewhere — ClickHouse already held spans of it that this
 * process does not (a late span after an earlier settle, another process, a restart) — or when the
 * cache was full. Reading is by trace id, which in the `spans` sort key is random, so it touches
 * most granules: fine for the exceptions, too slow as the normal path at volume.
 *
 * The open set lives in memory; what a crash loses is found again at start-up by `recover()`:
 * traces whose newest span was ingested after their latest processing (or never processed).
 */

interface OpenTrace extends TraceKey {
  firstSeen: number;
  lastSeen: number;
  hasRoot: boolean;
  /** lastSeen when the root was last looked up in ClickHouse (no repeat lookups while nothing new came). */
  rootCheckedAt: number;
  origin: EventOrigin;
  /** The whole trace as received here, by span id; null when it must be read from ClickHouse. */
  spans: Map<string, NormalizedSpan> | null;
  /** tool.called rows as written at ingest, by span id (memory path). */
  toolRows: Map<string, ToolCalledRow>;
}

export interface TraceSettlerOptions {
  ch: ClickHouseStore;
  logger: Logger;
  settleMs: number;
  maxWaitMs: number;
  hooks: TraceHooks;
  priceTrace?: PriceTrace;
  /** Traces processed per round (one span read and one insert per table each). */
  chunkSize?: number;
  /** How far back start-up recovery looks for unsettled traces. */
  recoveryDays?: number;
  /** Spans held in memory for open traces; past it, new traces are read back from ClickHouse. */
  maxCachedSpans?: number;
  now?: () => number;
}

/** Origin of rows written for traces recovered at start-up, whose sender is no longer known. */
export const SYSTEM_ORIGIN: EventOrigin = { actor: 'system', surface: 'system', user_id: '', api_key_id: '' };

function isoFromDateTime64(text: string): string {
  return `${text.replace(' ', 'T')}Z`;
}

export class TraceSettler {
  private readonly open = new Map<string, OpenTrace>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly now: () => number;
  private cachedSpans = 0;
  private readonly hookRunner: HookRunner;

  constructor(private readonly options: TraceSettlerOptions) {
    this.now = options.now ?? Date.now;
    this.hookRunner = new HookRunner(options.hooks, options.logger);
  }

  /** Called by the writer once spans are durable. */
  note(traces: TraceNote[]): void {
    const now = this.now();
    const limit = this.options.maxCachedSpans ?? 200_000;
    for (const t of traces) {
      const key = traceKeyString(t);
      let entry = this.open.get(key);
      if (!entry) {
        entry = {
          tenantId: t.tenantId,
          projectId: t.projectId,
          traceId: t.traceId,
          firstSeen: now,
          lastSeen: now,
          hasRoot: false,
          rootCheckedAt: -1,
          origin: t.origin,
          spans: new Map(),
          toolRows: new Map(),
        };
        this.open.set(key, entry);
      }
      entry.lastSeen = now;
      entry.hasRoot ||= t.hasRoot;
      entry.origin = t.origin;
      if (entry.spans) {
        for (const id of t.storedBefore ?? []) {
          if (!entry.spans.has(id)) {
            this.forget(entry);
            break;
          }
        }
      }
      if (entry.spans && this.cachedSpans + t.spans.length > limit) this.forget(entry);
      if (entry.spans) {
        for (const s of t.spans) {
          if (!entry.spans.has(s.spanId)) this.cachedSpans++;
          entry.spans.set(s.spanId, s);
        }
        for (const row of t.toolRows) entry.toolRows.set(row.span_id, row);
      }
    }
  }

  /** Drops a trace's cached spans: it will be read back from ClickHouse. */
  private forget(entry: OpenTrace): void {
    if (entry.spans) this.cachedSpans -= entry.spans.size;
    entry.spans = null;
    entry.toolRows.clear();
  }

  private close(key: string, entry: OpenTrace): void {
    this.forget(entry);
    this.open.delete(key);
  }

  start(): void {
    // Rounds are not more frequent than needed: each writes its traces in one insert per table.
    const interval = Math.max(20, Math.min(1000, Math.floor(this.options.settleMs / 3)));
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().finally(() => (this.running = null));
    }, interval);
    this.timer.unref();
  }

  /** Graceful shutdown: stop the timer and process every open trace now, settled or not. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await this.running;
    await this.processAll([...this.open.values()]);
    await this.hookRunner.drain();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const now = this.now();
    const due: OpenTrace[] = [];
    const needRoot: OpenTrace[] = [];
    for (const t of this.open.values()) {
      const quiet = now - t.lastSeen >= this.options.settleMs;
      if (now - t.firstSeen >= this.options.maxWaitMs || (quiet && t.hasRoot)) due.push(t);
      else if (quiet && t.rootCheckedAt !== t.lastSeen) needRoot.push(t);
    }
    try {
      // A late span's root came in an earlier request (maybe to another process): look it up.
      if (needRoot.length > 0) {
        const rooted = await this.storedRoots(needRoot);
        for (const t of needRoot) {
          t.rootCheckedAt = t.lastSeen;
          if (rooted.has(traceKeyString(t))) {
            t.hasRoot = true;
            due.push(t);
          }
        }
      }
      await this.processAll(due);
    } catch (error) {
      this.options.logger.error({ err: error }, 'trace settling failed; will retry');
    }
  }

  private async storedRoots(traces: OpenTrace[]): Promise<Set<string>> {
    const { ch } = this.options;
    const rows = await ch.read<{ tenant_id: string; project_id: string; trace_id: string }>(
      sql`SELECT DISTINCT tenant_id, project_id, trace_id FROM ${raw(ch.table('spans'))}
              WHERE ${traceKeysGuard(traces)} AND parent_span_id = ''`,
      { lane: 'ingest' },
    );
    return new Set(rows.map((r) => traceKeyString({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id })));
  }

  private async processAll(traces: OpenTrace[]): Promise<void> {
    const chunk = this.options.chunkSize ?? 5000;
    for (let i = 0; i < traces.length; i += chunk) await this.processChunk(traces.slice(i, i + chunk));
  }

  /** ClickHouse's clock minus ours, measured once at start: processed_at must compare with ingested_at. */
  private clockOffsetMs = 0;

  async measureClock(): Promise<void> {
    const before = Date.now();
    const [row] = await this.options.ch.read<{ now: string | number }>(raw('SELECT toUnixTimestamp64Milli(now64(3)) AS now'), { lane: 'ingest' });
    this.clockOffsetMs = Number(row.now) - Math.round((before + Date.now()) / 2);
  }

  /** "Now" on ClickHouse's clock, as DateTime64 text, without a round trip per chunk. */
  private serverNow(): string {
    return msToDateTime64(Date.now() + this.clockOffsetMs);
  }

  private async processChunk(traces: OpenTrace[]): Promise<void> {
    if (traces.length === 0) return;
    const { ch } = this.options;
    const seenAtStart = new Map(traces.map((t) => [t, t.lastSeen]));
    // Taken before the spans are read: a span ingested after this instant is not in the summary,
    // and recovery (ingested_at > processed_at) finds it after a crash.
    const processedAt = this.serverNow();
    // Traces not wholly held here are read back (one query for the chunk).
    const spansByTrace = await readTraceSpans(ch, traces.filter((t) => t.spans === null));

    const summaries: { trace: OpenTrace; summary: TraceSummary; spans: NormalizedSpan[] }[] = [];
    const toolRewrites: ToolCalledRow[] = [];
    for (const t of traces) {
      if (t.spans) {
        const spans = [...t.spans.values()];
        if (spans.length === 0) continue;
        const summary = summarizeTrace(spans, { origin: t.origin, processedAt, priceTrace: this.options.priceTrace });
        summaries.push({ trace: t, spans, summary });
        for (const row of summary.tools) {
          const written = t.toolRows.get(row.span_id);
          // Keep who recorded the call: only the derived fields change.
          if (!written) toolRewrites.push(row);
          else if (written.agent_name !== row.agent_name || written.output_tokens !== row.output_tokens) {
            toolRewrites.push({ ...row, actor: written.actor, surface: written.surface, user_id: written.user_id, api_key_id: written.api_key_id });
          }
        }
        continue;
      }
      const stored = spansByTrace.get(traceKeyString(t));
      if (!stored || stored.spans.length === 0) continue;
      const summary = summarizeTrace(stored.spans, { origin: t.origin, processedAt, priceTrace: this.options.priceTrace });
      summaries.push({ trace: t, spans: stored.spans, summary });
      toolRewrites.push(...toolRowsToRewrite(summary, stored.ingestAgentNames));
    }
    const insert = async (table: string, values: object[]) => {
      await ch.insert(ch.table(table), values, 'ingest');
    };
    await insert('event_tool_called', toolRewrites);
    await insert('event_trace_processed', summaries.map((s) => s.summary.processed));
    // Last: recovery (recover()) counts a trace as processed only once its `traces` row exists.
    await insert('traces', summaries.map((s) => s.summary.trace));

    for (const t of traces) {
      // A span that came during processing keeps the trace open for another round.
      if (t.lastSeen === seenAtStart.get(t)) this.close(traceKeyString(t), t);
    }
    for (const { summary, spans } of summaries) await this.hookRunner.enqueue(processedTrace(summary, spans));
  }

  /**
   * Start-up recovery: traces whose newest span was ingested after their latest trace.processed
   * row (or that have none) within `recoveryDays` are opened again and settle as usual. The
   * processing version is ClickHouse's clock when the spans were read, so "after" is exact.
   */
  /**
   * Finds traces whose spans are newer than their last processing, after a restart. It compares
   * with `traces`, the last table a settling round writes: a process killed between the
   * trace.processed insert and the traces insert left a trace that only looks processed.
   */
  async recover(): Promise<number> {
    const { ch } = this.options;
    await this.measureClock();
    const days = this.options.recoveryDays ?? 7;
    const rows = await ch.read<{ tenant_id: string; project_id: string; trace_id: string; has_root: number | string }>(
      fromText(
        `SELECT s.tenant_id AS tenant_id, s.project_id AS project_id, s.trace_id AS trace_id, s.has_root AS has_root
              FROM (
                SELECT tenant_id, project_id, trace_id, max(ingested_at) AS last_ingested, max(parent_span_id = '') AS has_root
                FROM ${ch.table('spans')}
                WHERE ingested_at >= now64(3) - toIntervalDay({days:UInt32})
                GROUP BY tenant_id, project_id, trace_id
              ) AS s
              LEFT JOIN (
                SELECT tenant_id, project_id, trace_id, max(processed_at) AS last_processed
                FROM ${ch.table('traces')}
                WHERE processed_at >= now64(3) - toIntervalDay({days:UInt32} + 1)
                GROUP BY tenant_id, project_id, trace_id
              ) AS p ON s.tenant_id = p.tenant_id AND s.project_id = p.project_id AND s.trace_id = p.trace_id
              WHERE p.last_processed IS NULL OR s.last_ingested > p.last_processed`,
        { days },
      ),
      { lane: 'system', settings: { join_use_nulls: 1 } },
    );
    const now = this.now();
    for (const r of rows) {
      const key = traceKeyString({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id });
      if (this.open.has(key)) continue;
      // Settles on the next round: the quiet period already passed while the process was down.
      this.open.set(key, {
        tenantId: r.tenant_id,
        projectId: r.project_id,
        traceId: r.trace_id,
        firstSeen: now - this.options.maxWaitMs,
        lastSeen: now - this.options.settleMs,
        hasRoot: Number(r.has_root) === 1,
        rootCheckedAt: -1,
        origin: SYSTEM_ORIGIN,
        spans: null,
        toolRows: new Map(),
      });
    }
    return rows.length;
  }
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

/** The hook payload (src/trace-hooks.ts) for the issues and monitors modules. */
function processedTrace(summary: TraceSummary, spans: NormalizedSpan[]): ProcessedTrace {
  const { trace } = summary;
  const failures = spans
    .filter((s) => s.statusCode === 'ERROR')
    .map((s) => {
      const exception = s.events.find((e) => e.name === 'exception');
      const exceptionType = exception?.attributes['exception.type'];
      const errorType = s.attributes['error.type'];
      const exceptionMessage = exception?.attributes['exception.message'];
      return {
        span_id: s.spanId,
        span_name: s.name,
        error_type: typeof exceptionType === 'string' ? exceptionType : typeof errorType === 'string' ? errorType : '',
        message: s.statusDescription || (typeof exceptionMessage === 'string' ? exceptionMessage : ''),
        tool_name: s.spanClass === 'tool' ? s.toolName || s.name : '',
        timestamp: isoFromDateTime64(nsToDateTime64(s.startNs)),
      };
    });
  const toolCalls = spans
    .filter((s) => s.spanClass === 'tool')
    .map((s) => ({
      span_id: s.spanId,
      name: s.toolName || s.name,
      is_error: s.statusCode === 'ERROR',
      duration_ms: s.durationMs,
      input: s.toolArguments ?? '',
      output: s.toolResult ?? '',
    }));
  return {
    tenantId: trace.tenant_id,
    projectId: trace.project_id,
    traceId: trace.trace_id,
    otelTraceId: trace.otel_trace_id,
    timestamp: isoFromDateTime64(trace.timestamp),
    agentName: trace.agent_name,
    hasError: trace.has_error === 1,
    failures,
    toolCalls,
    agentInput: trace.agent_input,
    agentOutput: trace.agent_output,
    spanAttributes: Object.fromEntries(spans.map((s) => [s.spanId, s.attributes])),
  };
}
