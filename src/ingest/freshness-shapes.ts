/**
 * The freshness fields trace lists and preset views answer beside their own (docs/ingestion.md "How
 * fresh an answer is"), declared once as TypeBox schemas: the OpenAPI properties and the type.
 * This file imports nothing of the server, so the dashboard's type check can read it.
 */
import { Type, type Static } from 'typebox';
import { nullable } from '../platform/http/shape-kit.js';

export const Freshness = Type.Object({
  data_as_of: nullable(
    Type.String({
      format: 'date-time',
      description: 'Every trace that became due for processing before this instant is processed and counted here (about TRACE_SETTLE_MS after its last span); null before the first reading.',
    }),
  ),
  settle_lag_ms: nullable(
    Type.Integer({
      description: 'How long the oldest trace due for processing had waited, in ms, when the lag was last read (about every second; 0: none waiting). Past settle_max_lag_ms ingestion answers 503.',
    }),
  ),
  settle_max_lag_ms: nullable(Type.Integer({ description: 'The server\'s bound on settle_lag_ms (SETTLE_MAX_LAG_MS); null when there is none.' })),
});
/** What trace lists and views answer about their freshness. */
export type Freshness = Static<typeof Freshness>;

/** The freshness properties as an answer adds them beside its own: additive, so none required. */
export const FRESHNESS_PROPERTIES = {
  data_as_of: Type.Optional(Freshness.properties.data_as_of),
  settle_lag_ms: Type.Optional(Freshness.properties.settle_lag_ms),
  settle_max_lag_ms: Type.Optional(Freshness.properties.settle_max_lag_ms),
};
