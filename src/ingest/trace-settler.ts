import type { Logger } from 'pino';
import { mapInSlices } from '../compute/yielding.js';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import { insertJsonLines } from '../stores/insert-json-lines.js';
import type { ComputePool } from '../compute/compute-pool.js';
import type { TraceHooks } from '../trace-hooks.js';
import { msToDateTime64, type EventOrigin, type ToolCalledRow } from './event-rows.js';
import type { TraceNote } from './ingest-writer.js';
import { HookRunner } from './hook-runner.js';
import { withCost, type SettledTrace, type SettleTraceInput } from './settle-summaries.js';
import { readTraceSpansBytes, traceKeyString, type TraceKey } from './stored-spans.js';
import type { PriceTrace } from './trace-summary.js';

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
 * CPU work runs on the compute pool (settle-summaries.ts): traces held in memory go as their
 * rows' JSON lines (at most `maxCachedSpansPerTrace` per trace, so a copy to a worker stays short),
 * read-back traces as the bytes ClickHouse returned. Pricing (the cost module's catalog lives on
 * this thread) and the rows' JSON are done in yielding slices.
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
  /** The whole trace as received here (its `spans` rows as JSON), by span id; null when it must be read from ClickHouse. */
  spans: Map<string, string> | null;
  /** tool.called rows as written at ingest, by span id (memory path). */
  toolRows: Map<string, ToolCalledRow>;
}

export interface TraceSettlerOptions {
  ch: ClickHouseStore;
  /** Summaries run on the compute pool (settle-summaries.ts), never on the event loop. */
  compute: ComputePool;
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
  /** Spans held in memory for one trace; past it, the trace is read back (its rows are copied to a worker at settling, a read-back is one string). */
  maxCachedSpansPerTrace?: number;
  now?: () => number;
}

/** Origin of rows written for traces recovered at start-up, whose sender is no longer known. */
export const SYSTEM_ORIGIN: EventOrigin = { actor: 'system', surface: 'system', user_id: '', api_key_id: '' };

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

  get openCount(): number {
    return this.open.size;
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
      // Every span this process holds was durable before this flush; more stored spans than held
      // means part of the trace came from elsewhere.
      if (entry.spans && (t.storedBeforeCount ?? 0) > entry.spans.size) this.forget(entry);
      const ids = t.spanIds ?? [];
      const lines = t.spanLines ?? [];
      if (entry.spans && this.cachedSpans + ids.length > limit) this.forget(entry);
      if (entry.spans && entry.spans.size + ids.length > (this.options.maxCachedSpansPerTrace ?? 2000)) this.forget(entry);
      if (entry.spans) {
        for (let i = 0; i < ids.length; i++) {
          if (!entry.spans.has(ids[i])) this.cachedSpans++;
          entry.spans.set(ids[i], lines[i]);
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

  /** Processes every open trace now and waits for their hooks (tests). */
  async flush(): Promise<void> {
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
    const result = await ch.client.query({
      query: `SELECT DISTINCT tenant_id, project_id, trace_id FROM ${ch.table('spans')}
              WHERE tenant_id IN {tenants:Array(String)} AND project_id IN {projects:Array(String)}
                AND trace_id IN {traces:Array(String)} AND parent_span_id = ''`,
      query_params: {
        tenants: [...new Set(traces.map((t) => t.tenantId))],
        projects: [...new Set(traces.map((t) => t.projectId))],
        traces: [...new Set(traces.map((t) => t.traceId))],
      },
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ tenant_id: string; project_id: string; trace_id: string }>();
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
    const result = await this.options.ch.client.query({ query: `SELECT toUnixTimestamp64Milli(now64(3)) AS now`, format: 'JSONEachRow' });
    const [row] = await result.json<{ now: string | number }>();
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
    // Traces not wholly held here are read back (one query for the chunk, parsed on the pool).
    const stored = await readTraceSpansBytes(ch, traces.filter((t) => t.spans === null));
    const settled = await this.summarize(traces, processedAt, stored);
    // Pricing needs the cost module's catalog (main thread): in slices, like the rows' JSON.
    const { priceTrace } = this.options;
    const summaries = await mapInSlices(settled, (s) => ({ ...s, summary: priceTrace ? withCost(s.summary, priceTrace(s.summary.usage)) : s.summary }), 50);
    const toolRewrites = await mapInSlices(settled.flatMap((s) => s.toolRewrites), (r) => JSON.stringify(r), 500);
    const processedRows = await mapInSlices(summaries, (s) => JSON.stringify(s.summary.processed), 500);
    const traceRows = await mapInSlices(summaries, (s) => JSON.stringify(s.summary.trace), 500);
    await insertJsonLines(ch, 'event_tool_called', toolRewrites);
    await insertJsonLines(ch, 'event_trace_processed', processedRows);
    // Last: recovery (recover()) counts a trace as processed only once its `traces` row exists.
    await insertJsonLines(ch, 'traces', traceRows);

    for (const t of traces) {
      // A span that came during processing keeps the trace open for another round.
      if (t.lastSeen === seenAtStart.get(t)) this.close(traceKeyString(t), t);
    }
    for (const { hook } of summaries) await this.hookRunner.enqueue(hook);
  }

  /**
   * Summaries of a chunk on the compute pool: traces held in memory go as their rows, in tasks of
   * bounded size (each copy to a worker is one short pause); read-back traces go with the bytes ClickHouse returned (moved, not copied).
   */
  private async summarize(traces: OpenTrace[], processedAt: string, stored: Uint8Array): Promise<SettledTrace[]> {
    const { compute } = this.options;
    const tasks: Promise<SettledTrace[]>[] = [];
    let group: SettleTraceInput[] = [];
    let groupSpans = 0;
    const send = () => {
      if (group.length > 0) tasks.push(compute.run('settle-summaries', { processedAt, traces: group }));
      group = [];
      groupSpans = 0;
    };
    const readBack: SettleTraceInput[] = [];
    for (const t of traces) {
      const key = traceKeyString(t);
      if (!t.spans) {
        readBack.push({ key, origin: t.origin });
        continue;
      }
      group.push({ key, origin: t.origin, rows: [...t.spans.values()], writtenTools: [...t.toolRows.values()] });
      groupSpans += t.spans.size;
      if (groupSpans >= 2000) send();
    }
    send();
    if (readBack.length > 0) tasks.push(compute.run('settle-summaries', { processedAt, traces: readBack, stored }, [stored.buffer as ArrayBuffer]));
    return (await Promise.all(tasks)).flat();
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
    const result = await ch.client.query({
      query: `SELECT s.tenant_id AS tenant_id, s.project_id AS project_id, s.trace_id AS trace_id, s.has_root AS has_root
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
      query_params: { days },
      format: 'JSONEachRow',
      clickhouse_settings: { join_use_nulls: 1 },
    });
    const rows = await result.json<{ tenant_id: string; project_id: string; trace_id: string; has_root: number | string }>();
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
