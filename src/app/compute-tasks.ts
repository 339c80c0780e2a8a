import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPriceTrace } from '../cost/ingest-pricing.js';
import type { PriceCatalog } from '../cost/price-catalog.js';
import { prepareIngest, prepareIngestTask } from '../ingest/write/ingest-prepare.js';
import { settleSummaries, settleSummariesTask, type SettleSummariesInput } from '../ingest/settle/settle-summaries.js';
import { prepareLogs, prepareLogsTask } from '../ingest/write/logs-prepare.js';
import { otlpBatch, otlpBatchTask } from '../lifecycle/otlp-export-lines.js';
import type { PriceTrace } from '../spans/trace-pricing.js';
import { ComputePool, type ComputePoolOptions } from '../platform/compute/compute-pool.js';
import { ComputeTaskTable } from '../platform/compute/compute-task.js';
import { fromSharedValue } from '../platform/compute/shared-value.js';
import { buildTraceDetail, traceDetailTask } from '../traces/trace-detail-build.js';
import { buildTracePage, tracePageTask } from '../traces/trace-page-build.js';

/** The cost module's pricing over a catalog, built once per catalog version on each thread. */
const priceTraceOver = (catalog: unknown): PriceTrace => createPriceTrace({ current: () => catalog as PriceCatalog });

/**
 * Settling on the pool, priced with the catalog the settler shared: ingestion does not import the
 * cost module, so this table joins the two on the worker, as the cost module's init joins them in
 * the process.
 */
function settleTask(input: SettleSummariesInput) {
  return settleSummaries(input, input.prices ? fromSharedValue(input.prices, priceTraceOver) : undefined);
}

/**
 * Every task the compute pool runs, each handle bound to its implementation. Each is a pure
 * function of plain data, so it runs the same in a worker thread and inline.
 */
export const computeTasks = new ComputeTaskTable()
  .bind(prepareIngestTask, prepareIngest)
  .bind(prepareLogsTask, prepareLogs)
  .bind(settleSummariesTask, settleTask)
  .bind(traceDetailTask, buildTraceDetail)
  .bind(tracePageTask, buildTracePage)
  .bind(otlpBatchTask, otlpBatch);

/** The worker module beside this file: compiled .js under dist/, or a tsx shim when running from source. */
function computeWorkerFile(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = path.dirname(here);
  return here.endsWith('.ts') ? path.join(dir, 'compute-worker-tsx.mjs') : path.join(dir, 'compute-worker.js');
}

/** The service's compute pool over this table; its workers load `workerFile` if given, else the module beside this file. */
export function createComputePool(options: Omit<ComputePoolOptions, 'tasks' | 'workerFile'> & { workerFile?: string }): ComputePool {
  return new ComputePool({ ...options, tasks: computeTasks, workerFile: options.workerFile ?? computeWorkerFile() });
}
