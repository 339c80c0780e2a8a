/**
 * What tests and benchmarks set on a service they start themselves, never read from the
 * environment: an operator has no use for them, so they are options of `startService` (and of the
 * entry points that tests and benchmarks spawn), not variables of the configuration reference.
 */
export interface HarnessOptions {
  /**
   * The first webhook retry delay (default 30 s). The whole retry schedule and its 24 h give-up
   * window scale with it, so tests lower it to run them in seconds.
   */
  webhookBackoffBaseMs?: number;
  /**
   * Files written when the service stops, read by the ingest benchmark: the compute pool's thread
   * CPU per task, the ClickHouse store's statements per kind and the engine's counters, the
   * PostgreSQL pool's statements per kind. Unset: nothing is counted.
   */
  statsFiles?: { compute?: string; clickhouse?: string; postgres?: string };
  /**
   * The compute workers' module instead of the one beside the service's code. Tests run from
   * TypeScript source, where each worker would load the tsx shim and compile its modules as it
   * starts (~1.3 s of CPU); they pass a bundle of compute-worker.ts built once per run (~0.4 s).
   */
  computeWorkerFile?: string;
}
