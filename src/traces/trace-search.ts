import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { listTraces, type TraceListFilters, type TraceListRow } from './trace-store.js';

/**
 * A page of the trace list under a search (docs/search.md), newest first, as listTraces with
 * `search` would answer it, in two steps:
 *
 * 1. Probe: the newest PROBE_TRACES traces under the other filters (a cheap keyset read), then the
 *    matches among them (their content rows found by the primary key). A common word fills the
 *    page here, without reading the content of the whole project.
 * 2. Otherwise the rest: matches strictly older than the last probed trace, found through the text
 *    index over all content (a rare word: few rows read wherever they are).
 *
 * Both steps are exact and ordered, and the second starts where the first's candidates end, so the
 * page is the same as one search over everything would give.
 */

export const PROBE_TRACES = 1000;

export async function searchTraces(
  ch: ClickHouseStore,
  tenantId: string,
  projectId: string,
  f: TraceListFilters & { search: NonNullable<TraceListFilters['search']> },
  probeTraces = PROBE_TRACES,
): Promise<TraceListRow[]> {
  const { search, ...plain } = f;
  const probe = await listTraces(ch, tenantId, projectId, { ...plain, limit: probeTraces });
  if (probe.length === 0) return [];
  const hits = await listTraces(ch, tenantId, projectId, { ...f, within: probe.map((r) => r.trace_id) });
  if (hits.length >= f.limit || probe.length < probeTraces) return hits;
  const last = probe[probe.length - 1];
  const rest = await listTraces(ch, tenantId, projectId, { ...f, before: { timestamp: last.ts, traceId: last.trace_id }, limit: f.limit - hits.length });
  return [...hits, ...rest];
}
