import type { ClickHouseStore } from '../clickhouse/clickhouse.js';
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
  compute.onTask = (task, seconds) => metrics.computeTasks.observe({ task }, seconds);
  metrics.sources.computePool = () => compute.load;
}
