import { prepareIngest } from '../ingest/ingest-prepare.js';
import { settleSummaries } from '../ingest/settle-summaries.js';
import { buildTraceDetail } from '../traces/trace-detail-build.js';
import { buildTracePage } from '../traces/trace-page-build.js';

/**
 * The tasks the compute pool runs, by name. Each is a pure function of plain data, so it runs the
 * same in a worker thread and inline (ComputePool with 0 threads).
 */
const tasks = {
  'prepare-ingest': prepareIngest,
  'settle-summaries': settleSummaries,
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
