import type { AppDeps } from '../app/app-deps.js';
import type { Freshness } from './freshness-shapes.js';

/**
 * How fresh an answer that reads processed traces is: the trace list and the preset views add these
 * fields beside their own (docs/ingestion.md "How fresh an answer is"). The figures come from the
 * settle lag the process reads from the settle queue about every second (settle/settle-lag.ts),
 * which the ingest module puts on deps.services.settleLag.
 */

export type { Freshness };

/** The freshness fields of an answer; null where no lag is read (a process without the ingest module). */
export function freshnessOf(deps: AppDeps): Freshness {
  return deps.services.settleLag?.freshness() ?? { data_as_of: null, settle_lag_ms: null, settle_max_lag_ms: null };
}
