import type { AppDeps } from '../app/app-deps.js';

/**
 * How fresh an answer that reads processed traces is: the trace list and the preset views add these
 * fields beside their own (docs/ingestion.md "How fresh an answer is"). The figures come from the
 * settle lag the process reads from the settle queue about every second (settle/settle-lag.ts),
 * which the ingest module puts on deps.services.settleLag.
 */

/** What trace lists and views answer about their freshness. */
export interface Freshness {
  /** Every trace due before this instant has been processed (ISO 8601, UTC); null before the first reading. */
  data_as_of: string | null;
  /** How long the oldest due trace had waited to be processed at that reading, in ms; null before the first reading. */
  settle_lag_ms: number | null;
  /** SETTLE_MAX_LAG_MS: past this lag ingestion refuses spans; null when there is no bound. */
  settle_max_lag_ms: number | null;
}

/** The freshness fields of an answer; null where no lag is read (a process without the ingest module). */
export function freshnessOf(deps: AppDeps): Freshness {
  return deps.services.settleLag?.freshness() ?? { data_as_of: null, settle_lag_ms: null, settle_max_lag_ms: null };
}

/** The OpenAPI properties of the freshness fields, added to the trace list and every view payload. */
export const FRESHNESS_PROPERTIES = {
  data_as_of: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'Every trace that became due for processing before this instant is processed and counted here (about TRACE_SETTLE_MS after its last span); null before the first reading.',
  },
  settle_lag_ms: {
    type: ['integer', 'null'],
    description: 'How long the oldest trace due for processing had waited, in ms, when the lag was last read (about every second; 0: none waiting). Past settle_max_lag_ms ingestion answers 503.',
  },
  settle_max_lag_ms: {
    type: ['integer', 'null'],
    description: 'The server\'s bound on settle_lag_ms (SETTLE_MAX_LAG_MS); null when there is none.',
  },
} as const;
