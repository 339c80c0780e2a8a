import type { ProcessedTrace, TraceHooks } from '../../src/ingest/trace-hooks.js';

/** Hands a group of processed traces to every listener, in registration order, as a settling round's hook runner does. */
export async function deliverProcessedTraces(hooks: TraceHooks, traces: ProcessedTrace[]): Promise<void> {
  for (const listener of hooks.onTracesProcessed) await listener(traces);
}
