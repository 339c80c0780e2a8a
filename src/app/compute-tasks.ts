import { createPriceTrace } from '../cost/ingest-pricing.js';
import type { PriceCatalog } from '../cost/price-catalog.js';
import { prepareIngest } from '../ingest/write/ingest-prepare.js';
import { settleSummaries, type SettleSummariesInput } from '../ingest/settle/settle-summaries.js';
import type { PriceTrace } from '../spans/trace-pricing.js';
import { fromSharedValue } from '../platform/compute/shared-value.js';
import { buildTraceDetail } from '../traces/trace-detail-build.js';
import { buildTracePage } from '../traces/trace-page-build.js';

/** The cost module's pricing over a catalog, built once per catalog version on each thread. */
const priceTraceOver = (catalog: unknown): PriceTrace => createPriceTrace({ current: () => catalog as PriceCatalog });

/**
 * Settling on the pool, priced here with the catalog the settler shared (ingestion does not import
 * the cost module; this registry joins the two, as the cost module's init joins them in a process).
 */
function settleTask(input: SettleSummariesInput) {
  return settleSummaries(input, input.prices ? fromSharedValue(input.prices, priceTraceOver) : undefined);
}

/**
 * The tasks the compute pool runs, by name. Each is a pure function of plain data, so it runs the
 * same in a worker thread and inline (ComputePool with 0 threads).
 */
const tasks = {
  'prepare-ingest': prepareIngest,
  'settle-summaries': settleTask,
  'trace-detail': buildTraceDetail,
  'trace-page': buildTracePage,
};

export type ComputeTaskName = keyof typeof tasks;
export type ComputeTaskInput<N extends ComputeTaskName> = Parameters<(typeof tasks)[N]>[0];
export type ComputeTaskOutput<N extends ComputeTaskName> = ReturnType<(typeof tasks)[N]>;
export interface ComputeTaskMessage {
  name: ComputeTaskName;
  input: unknown;
}

export function runComputeTask<N extends ComputeTaskName>(message: { name: N; input: ComputeTaskInput<N> }): ComputeTaskOutput<N> {
  const task = tasks[message.name] as (input: ComputeTaskInput<N>) => ComputeTaskOutput<N>;
  if (!task) throw new Error(`unknown compute task ${String(message.name)}`);
  return task(message.input);
}
