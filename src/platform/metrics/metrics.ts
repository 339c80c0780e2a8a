import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineActivity } from '../clickhouse/sql/engine-activity.js';

/**
 * The service's Prometheus metrics (docs/operations.md "Metrics"), one registry per running
 * service. Counters and histograms are incremented where things happen, which is a few additions
 * on the hot path; everything that is a level (queue depths, budgets, backlogs, pool load) is a
 * gauge read from its owner when Prometheus scrapes, through the `sources` the owners fill in.
 *
 * Labels come from small fixed sets chosen in code (a reason, a lane, an outcome, a route
 * template, an error code): never a tenant, project, trace or key id, so the number of series
 * stays bounded whatever the traffic.
 */

/** Levels read when scraped; each owner sets its own, a missing one reports nothing. */
export interface MetricSources {
  ingestBudget?: () => { inUseBytes: number; limitBytes: number };
  /** Whether flushes are paced for settling to catch up (INGEST_FLUSH_CATCH_UP_LAG_MS). */
  ingestCatchingUp?: () => boolean;
  /** The settle queue as last read (settle-lag.ts) plus its depth, counted on scrape. */
  settleQueue?: () => Promise<{ depth: number; oldestDueAgeSeconds: number; maxLagSeconds: number }>;
  traceHooks?: () => { pending: number; queuedBytes: number };
  webhookBacklog?: () => Promise<{ pending: number; due: number }>;
  gates?: () => Record<string, { running: number; queued: number }>;
  computePool?: () => { threads: number; utilization: number; queued: number };
  /** The ClickHouse engine's merges and parts (engine-activity.ts); null while no reading came back yet. */
  engine?: () => Promise<EngineActivity | null>;
}

/** The steps of a settle round and around it, timed apart (lookout_settle_phase_duration_seconds). */
export type SettlePhase = 'claim' | 'read' | 'summarize' | 'write' | 'hooks' | 'finish';

/** Seconds, for request and statement latencies: 5 ms to 30 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
/** Request bodies in bytes: 1 KiB to 16 MiB. */
const BODY_BUCKETS = [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];

export class Metrics {
  readonly registry = new Registry();
  readonly sources: MetricSources = {};

  readonly ingestRequests = new Counter({ name: 'lookout_ingest_requests_total', help: 'OTLP export requests by answer code (ok or the error code)', labelNames: ['code'], registers: [this.registry] });
  readonly spansAccepted = new Counter({ name: 'lookout_ingest_spans_accepted_total', help: 'Spans accepted (stored, or already stored: see duplicates)', registers: [this.registry] });
  readonly spansDuplicate = new Counter({ name: 'lookout_ingest_spans_duplicate_total', help: 'Accepted spans that were already stored (a re-sent batch)', registers: [this.registry] });
  readonly spansRejected = new Counter({
    name: 'lookout_ingest_spans_rejected_total',
    help: 'Spans rejected through partial_success, by reason (invalid, trace_span_limit)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly logRecordsAccepted = new Counter({ name: 'lookout_ingest_log_records_accepted_total', help: 'OTLP log records accepted (stored with their span\'s trace)', registers: [this.registry] });
  readonly logRecordsRejected = new Counter({
    name: 'lookout_ingest_log_records_rejected_total',
    help: 'OTLP log records rejected through partial_success, by reason (invalid, trace_record_limit)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly ingestBodyBytes = new Histogram({ name: 'lookout_ingest_request_body_bytes', help: 'Decompressed OTLP request bodies, in bytes', buckets: BODY_BUCKETS, registers: [this.registry] });
  readonly overloadResponses = new Counter({
    name: 'lookout_http_overload_responses_total',
    help: 'Answers 429 and 503 by status and reason (ingest_budget, compute_queue, settle_lag, storage_failing, shutting_down, compute_memory, analytics_queue, interactive_queue, other)',
    labelNames: ['status', 'reason'],
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'lookout_http_request_duration_seconds',
    help: 'REST API requests by route template, method and status class',
    labelNames: ['route', 'method', 'status_class'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly viewDuration = new Histogram({ name: 'lookout_analytics_view_duration_seconds', help: 'Preset analytics views by view', labelNames: ['view'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  readonly statementDuration = new Histogram({
    name: 'lookout_clickhouse_statement_duration_seconds',
    help: 'ClickHouse statements by lane, waiting for a gate slot included',
    labelNames: ['lane'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly statementErrors = new Counter({
    name: 'lookout_clickhouse_statement_errors_total',
    help: 'ClickHouse statements that failed, by lane and ClickHouse error code (client: no answer from the engine)',
    labelNames: ['lane', 'code'],
    registers: [this.registry],
  });
  readonly postgresErrors = new Counter({
    name: 'lookout_postgres_errors_total',
    help: 'PostgreSQL errors that failed a request or a background round, by SQLSTATE',
    labelNames: ['code'],
    registers: [this.registry],
  });
  readonly gateRejections = new Counter({
    name: 'lookout_query_gate_rejections_total',
    help: 'Reads refused by a lane gate: queue_full (429) or timeout (504 while waiting)',
    labelNames: ['lane', 'reason'],
    registers: [this.registry],
  });
  readonly settleRounds = new Counter({ name: 'lookout_settle_rounds_total', help: 'Settle rounds by outcome (ok, failed)', labelNames: ['outcome'], registers: [this.registry] });
  readonly settleRoundDuration = new Histogram({
    name: 'lookout_settle_round_duration_seconds',
    help: 'Settle rounds, from the claim until the rows are written (hooks run after)',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly flushPhaseDuration = new Histogram({
    name: 'lookout_ingest_flush_phase_duration_seconds',
    help: 'Steps of an ingest flush, each counted once it is done: register (the stored-trace registry, PostgreSQL), check (the duplicate check, ClickHouse), insert (the span and event inserts), record (the settle queue, PostgreSQL)',
    labelNames: ['phase'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly settlePhaseDuration = new Histogram({
    name: 'lookout_settle_phase_duration_seconds',
    help: 'Steps of settling: claim (the PostgreSQL claim, also when nothing is due), read (spans and log records back from ClickHouse), summarize (compute pool), write (the round\'s inserts), hooks (until the round\'s hooks ran), finish (the PostgreSQL finish)',
    labelNames: ['phase'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly tracesSettled = new Counter({
    name: 'lookout_settle_traces_total',
    help: 'Traces settled, by where their spans came from (memory, read_back)',
    labelNames: ['source'],
    registers: [this.registry],
  });
  readonly settleReadBacks = new Counter({
    name: 'lookout_settle_read_backs_total',
    help: 'Traces settled from spans read back from ClickHouse, by why memory did not hold them whole (not_held, stored_before, other_registrations, span_bound, trace_span_bound, byte_bound, other_upserts)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly hookGroups = new Counter({ name: 'lookout_trace_hook_groups_total', help: 'Trace hook listener runs over a group of settled traces, by outcome', labelNames: ['outcome'], registers: [this.registry] });
  readonly webhookDeliveries = new Counter({
    name: 'lookout_webhook_deliveries_total',
    help: 'Webhook attempts by outcome (succeeded, retry, gave_up, failed)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly computeTasks = new Histogram({
    name: 'lookout_compute_task_duration_seconds',
    help: 'Compute pool tasks by task name, queueing included',
    labelNames: ['task'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly computeTaskWaits = new Histogram({
    name: 'lookout_compute_task_wait_seconds',
    help: 'The part of each compute task before a worker ran it (queued behind other tasks, and the trips to and from the worker), by task name',
    labelNames: ['task'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const sources = this.sources;
    const gauge = (name: string, help: string, collect: (g: Gauge) => void | Promise<void>, labelNames: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          await collect(this);
        },
      });
    gauge('lookout_ingest_budget_in_use_bytes', 'Bytes of the ingest memory budget held by requests in progress', (g) => {
      const budget = sources.ingestBudget?.();
      if (budget) g.set(budget.inUseBytes);
    });
    gauge('lookout_ingest_budget_limit_bytes', 'The ingest memory budget (INGEST_MAX_INFLIGHT_BYTES)', (g) => {
      const budget = sources.ingestBudget?.();
      if (budget) g.set(budget.limitBytes);
    });
    gauge('lookout_ingest_catching_up', '1 while settling lags past INGEST_FLUSH_CATCH_UP_LAG_MS and flushes are paced to free CPU for it, else 0', (g) => {
      const catchingUp = sources.ingestCatchingUp?.();
      if (catchingUp !== undefined) g.set(catchingUp ? 1 : 0);
    });
    // One read serves the three settle gauges of a scrape.
    let settleRead: Promise<{ depth: number; oldestDueAgeSeconds: number; maxLagSeconds: number } | null> | null = null;
    const settleQueue = () => (settleRead ??= (sources.settleQueue?.() ?? Promise.resolve(null)).catch(() => null).finally(() => setTimeout(() => (settleRead = null), 0)));
    gauge('lookout_settle_queue_depth', 'Traces in the settle queue (all processes): waiting, due or being settled', async (g) => {
      const q = await settleQueue();
      if (q) g.set(q.depth);
    });
    gauge('lookout_settle_oldest_due_age_seconds', 'How long the oldest due trace has waited to be settled (0: none due)', async (g) => {
      const q = await settleQueue();
      if (q) g.set(q.oldestDueAgeSeconds);
    });
    gauge('lookout_settle_max_lag_seconds', 'SETTLE_MAX_LAG_MS: past this age of the oldest due trace ingestion answers 503 (0: off)', async (g) => {
      const q = await settleQueue();
      if (q) g.set(q.maxLagSeconds);
    });
    gauge('lookout_trace_hooks_pending', 'Settled traces whose hooks (issues, monitors) are queued or running in this process', (g) => {
      const hooks = sources.traceHooks?.();
      if (hooks) g.set(hooks.pending);
    });
    gauge('lookout_trace_hooks_queued_bytes', 'Estimated bytes of hook payloads waiting in this process', (g) => {
      const hooks = sources.traceHooks?.();
      if (hooks) g.set(hooks.queuedBytes);
    });
    let webhookRead: Promise<{ pending: number; due: number } | null> | null = null;
    const webhooks = () => (webhookRead ??= (sources.webhookBacklog?.() ?? Promise.resolve(null)).catch(() => null).finally(() => setTimeout(() => (webhookRead = null), 0)));
    gauge('lookout_webhook_attempts_pending', 'Webhook attempts waiting to be sent (all processes), including those not due yet', async (g) => {
      const w = await webhooks();
      if (w) g.set(w.pending);
    });
    gauge('lookout_webhook_attempts_due', 'Webhook attempts due now and not yet sent (all processes)', async (g) => {
      const w = await webhooks();
      if (w) g.set(w.due);
    });
    gauge(
      'lookout_query_gate_running',
      'Reads running in a gated lane',
      (g) => {
        for (const [lane, load] of Object.entries(sources.gates?.() ?? {})) g.set({ lane }, load.running);
      },
      ['lane'],
    );
    gauge(
      'lookout_query_gate_queued',
      'Reads waiting for a slot in a gated lane',
      (g) => {
        for (const [lane, load] of Object.entries(sources.gates?.() ?? {})) g.set({ lane }, load.queued);
      },
      ['lane'],
    );
    gauge('lookout_compute_pool_threads', 'Worker threads of the compute pool (0: work runs on the event loop)', (g) => {
      const pool = sources.computePool?.();
      if (pool) g.set(pool.threads);
    });
    gauge('lookout_compute_pool_utilization_ratio', 'Share of the compute pool threads\' time spent running tasks since start (0 to 1)', (g) => {
      const pool = sources.computePool?.();
      if (pool) g.set(pool.utilization);
    });
    gauge('lookout_compute_pool_queue_length', 'Compute tasks waiting for a thread', (g) => {
      const pool = sources.computePool?.();
      if (pool) g.set(pool.queued);
    });
    // One reading serves the engine gauges of a scrape.
    let engineRead: Promise<EngineActivity | null> | null = null;
    const engine = () => (engineRead ??= (sources.engine?.() ?? Promise.resolve(null)).catch(() => null).finally(() => setTimeout(() => (engineRead = null), 0)));
    const engineGauge = (name: string, help: string, value: (a: EngineActivity) => number) =>
      gauge(name, help, async (g) => {
        const a = await engine();
        if (a) g.set(value(a));
      });
    engineGauge('lookout_clickhouse_merges_running', 'Merges (and mutations) the ClickHouse engine is running on Lookout\'s tables', (a) => a.mergesRunning);
    engineGauge('lookout_clickhouse_merge_largest_bytes', 'Compressed bytes of the parts the largest running merge reads (0: none runs)', (a) => a.largestMerge.bytes);
    engineGauge('lookout_clickhouse_merge_largest_rows_read', 'Rows the largest running merge has read so far', (a) => a.largestMerge.rowsRead);
    engineGauge('lookout_clickhouse_merge_largest_progress_ratio', 'How far the largest running merge is (0 to 1)', (a) => a.largestMerge.progress);
    engineGauge('lookout_clickhouse_merge_largest_elapsed_seconds', 'How long the largest running merge has been running', (a) => a.largestMerge.elapsedSeconds);
    gauge(
      'lookout_clickhouse_active_parts',
      'Active data parts of each Lookout table in the ClickHouse engine',
      async (g) => {
        const a = await engine();
        if (!a) return;
        g.reset();
        for (const [table, parts] of Object.entries(a.activeParts)) g.set({ table }, parts);
      },
      ['table'],
    );
    // Event-loop lag (nodejs_eventloop_lag_*), heap, RSS (process_resident_memory_bytes), GC, handles.
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Counts a 429 or 503 answer; `reason` comes from the error (OverloadedError, RateLimitedError). */
  countOverload(status: number, reason: string | undefined): void {
    if (status === 429 || status === 503) this.overloadResponses.inc({ status: String(status), reason: reason ?? 'other' });
  }

  /** Counts an error that failed a request or a round, when PostgreSQL raised it. */
  countError(error: unknown): void {
    const e = error as { code?: unknown; severity?: unknown } | null;
    if (e && typeof e.code === 'string' && typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) this.postgresErrors.inc({ code: e.code });
  }

  /** The text exposition and its content type, for the metrics listener. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
