import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { msToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { termTraceIds } from './search-sql.js';
import { listTraces, newestTraceSlice, type TraceListFilters, type TraceListRow } from './trace-store.js';

/**
 * A page of the trace list under a search (docs/search.md), newest first, as listTraces with
 * `search` would answer it, in up to three steps:
 *
 * 1. Candidates: per word or phrase to find, the traces with some stored row holding it, through the
 *    text index, stopped past CANDIDATE_TRACES. A word in few traces (a rare word, a phrase, a
 *    name) names every trace that can match: their summaries passing the other filters, newest
 *    first, then the newest of them checked exactly (newestMatches), found by the primary key,
 *    until the page is full (all at once when they are no more than a page); nothing else is read.
 * 2. Probes: otherwise every word is common. A slice of the newest traces under the other filters
 *    (newestTraceSlice: from the time of the n-th newest summary row on, read without FINAL), a
 *    few pages' worth and then PROBE_TRACES more, and the matches among them, their summaries and
 *    content rows found by the primary key: a common word fills the page here, reading the content
 *    of few traces rather than of the whole project.
 * 3. Otherwise the rest: matches strictly older than the last probed slice, over all content.
 *
 * Each step is exact and ordered, and each starts where the one before ended, so the page is the
 * same as one search over everything would give.
 */

export const CANDIDATE_TRACES = 2000;
export const PROBE_TRACES = 1000;
const FIRST_PROBE_PAGES = 4;
const FIRST_PROBE_MIN = 100;

export async function searchTraces(
  ch: ClickHouseStore,
  tenantId: string,
  projectId: string,
  f: TraceListFilters & { search: NonNullable<TraceListFilters['search']> },
  probeTraces = PROBE_TRACES,
  candidateTraces = CANDIDATE_TRACES,
): Promise<TraceListRow[]> {
  const candidates = await termCandidates(ch, tenantId, projectId, f, candidateTraces);
  const { search: _search, ...plain } = f;
  if (candidates !== null) {
    if (candidates.length === 0) return [];
    // As many as a page: each is checked anyway, in one read.
    if (candidates.length <= f.limit) return listTraces(ch, tenantId, projectId, { ...f, within: candidates });
    return newestMatches(ch, tenantId, projectId, f, await listTraces(ch, tenantId, projectId, { ...plain, within: candidates, limit: candidates.length }));
  }
  const hits: TraceListRow[] = [];
  let before = f.before;
  for (const size of probeSizes(f.limit, probeTraces)) {
    const slice = await newestTraceSlice(ch, tenantId, projectId, { ...plain, before, limit: size });
    if (slice === null) return hits;
    const within = { ...f, before, notBefore: slice.since, within: slice.traceIds, limit: f.limit - hits.length };
    if (slice.traceIds.length > 0) hits.push(...(await listTraces(ch, tenantId, projectId, within)));
    if (hits.length >= f.limit || slice.complete) return hits;
    // Every trace at or after `since` was checked: the next step starts strictly before it.
    before = { timestamp: slice.since, traceId: '' };
  }
  return [...hits, ...(await listTraces(ch, tenantId, projectId, { ...f, before, limit: f.limit - hits.length }))];
}

/**
 * The first `f.limit` matches among `listed` (summaries passing the other filters, newest first):
 * checked in that order, a page's worth first and then twice as many each time, so a page of a
 * phrase in a thousand traces reads the text of about a page of them rather than of all. Every
 * listed trace newer than the last one checked was checked, so the page is the one a check of all
 * of them would give.
 */
async function newestMatches(
  ch: ClickHouseStore,
  tenantId: string,
  projectId: string,
  f: TraceListFilters & { search: NonNullable<TraceListFilters['search']> },
  listed: TraceListRow[],
): Promise<TraceListRow[]> {
  const hits: TraceListRow[] = [];
  let batch = f.limit;
  for (let at = 0; at < listed.length && hits.length < f.limit; at += batch, batch *= 2) {
    const within = listed.slice(at, at + batch).map((t) => t.trace_id);
    hits.push(...(await listTraces(ch, tenantId, projectId, { ...f, within, limit: f.limit - hits.length })));
  }
  return hits;
}

/**
 * The probes' sizes: first a few times the page (a word in most traces fills it there, reading the
 * content of few traces), then `probeTraces` more (a word in one trace of several hundred).
 */
function probeSizes(limit: number, probeTraces: number): number[] {
  const first = Math.min(probeTraces, Math.max(FIRST_PROBE_MIN, FIRST_PROBE_PAGES * limit));
  return first < probeTraces ? [first, probeTraces] : [probeTraces];
}

/**
 * The traces that can match when some word or phrase to find is in at most `cap` traces: those
 * holding each such word in some stored row (of any settling, so a trace whose newest rows hold it
 * is among them). Null when every word is in more; none when such a word is in none.
 */
async function termCandidates(
  ch: ClickHouseStore,
  tenantId: string,
  projectId: string,
  f: TraceListFilters & { search: NonNullable<TraceListFilters['search']> },
  cap: number,
): Promise<string[] | null> {
  const scope = { tenantId, projectId };
  const contentSince = f.contentSinceMs === undefined ? undefined : msToDateTime64(f.contentSinceMs);
  const bounds = { start: f.start, end: f.end, notAfter: f.before?.timestamp, within: f.within, contentSince };
  const found: Set<string>[] = [];
  for (const term of f.search.terms) {
    if (term.negated) continue;
    const rows = await ch.read<{ trace_id: string }>(termTraceIds(ch, scope, term, bounds, cap), { lane: 'analytics', scope });
    if (rows.length === 0) return [];
    if (rows.length <= cap) found.push(new Set(rows.map((r) => r.trace_id)));
  }
  if (found.length === 0) return null;
  const [first, ...others] = found;
  return [...first].filter((id) => others.every((ids) => ids.has(id)));
}
