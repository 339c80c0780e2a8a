import type { ClickHouseStore } from '../clickhouse/clickhouse.js';
import { readEngineActivity, type EngineActivity } from '../clickhouse/sql/engine-activity.js';
import type { ComputePool } from '../compute/compute-pool.js';
import { HttpError } from '../http/errors.js';
import type { Metrics } from './metrics.js';

/** A ClickHouse error's code as a label: the engine's number, `client` when the engine never answered. */
function engineCode(error: unknown): string {
  const raw = (error as { code?: unknown } | null)?.code;
  // The client gives the engine's code as a string; anything that is not a short number means no engine answer.
  const code = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
  return /^\d{1,4}$/.test(code) ? code : 'client';
}

/**
 * Connects the shared platform pieces to the metrics: every ClickHouse statement (latency by lane,
 * failures by error code), the lane gates' refusals and load, the compute pool's tasks and load.
 * A store shared by several services in one process (tests) reports to the last one connected.
 */
export function observePlatform(metrics: Metrics, ch: ClickHouseStore, compute: ComputePool): void {
  ch.observe({
    statement(lane, seconds, error) {
      metrics.statementDuration.observe({ lane }, seconds);
      // A full gate's 429 is only a gate refusal; a time limit passed, waiting or running, counts as TIMEOUT_EXCEEDED (159).
      if (error && !(error instanceof HttpError && error.code !== 'query_timeout')) {
        metrics.statementErrors.inc({ lane, code: error instanceof HttpError ? '159' : engineCode(error) });
      }
    },
    gateRefused(lane, reason) {
      metrics.gateRejections.inc({ lane, reason });
    },
  });
  metrics.sources.gates = () => ({ analytics: ch.gates.analytics.load, interactive: ch.gates.interactive.load });
  metrics.sources.engine = engineReadings(ch);
  compute.onTask = (task, seconds, waitSeconds) => {
    metrics.computeTasks.observe({ task }, seconds);
    metrics.computeTaskWaits.observe({ task }, waitSeconds);
  };
  metrics.sources.computePool = () => compute.load;
}

/** How long a scrape waits for the engine's answer before it reports the previous reading. */
const ENGINE_READ_WAIT_MS = 250;

/**
 * The engine's merges and parts as a scrape sees them: a reading is started when none is in flight,
 * and the scrape waits for it at most ENGINE_READ_WAIT_MS, else reports the last one — the system
 * lane may be busy with a leader job, and a scrape must not wait behind it.
 */
function engineReadings(ch: ClickHouseStore): () => Promise<EngineActivity | null> {
  let last: EngineActivity | null = null;
  let reading: Promise<void> | null = null;
  return async () => {
    reading ??= readEngineActivity(ch)
      .then((activity) => {
        last = activity;
      })
      .catch(() => {})
      .finally(() => {
        reading = null;
      });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([reading, new Promise<void>((resolve) => (timer = setTimeout(resolve, ENGINE_READ_WAIT_MS)))]);
    clearTimeout(timer);
    return last;
  };
}
