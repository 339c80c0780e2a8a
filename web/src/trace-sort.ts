import type { TraceListItem } from './api/types.js';

/** A trace list row as far as sorting reads it (any of the figures may be missing). */
type SortableTrace = Partial<TraceListItem>;

/**
 * Sorting the trace list: the API lists newest first in pages; a sort orders the rows of the page
 * on screen and is kept in the URL (sort, dir). The values sorted on are the API's figures.
 */
export const SORTS = [
  { key: 'timestamp', label: 'Time', value: (t: SortableTrace) => t.timestamp ?? '', numeric: false },
  { key: 'agent', label: 'Agent', value: (t: SortableTrace) => t.agent_name ?? '', numeric: false },
  { key: 'duration', label: 'Duration', value: (t: SortableTrace) => t.total_duration_ms ?? null, numeric: true },
  { key: 'spans', label: 'Spans', value: (t: SortableTrace) => t.span_count ?? null, numeric: true },
  { key: 'tokens', label: 'Tokens', value: (t: SortableTrace) => t.total_tokens ?? null, numeric: true },
  { key: 'cost', label: 'Est. cost', value: (t: SortableTrace) => t.estimated_cost_usd ?? null, numeric: true },
] as const;

export type SortKey = (typeof SORTS)[number]['key'];
export interface TraceSort {
  key: SortKey;
  direction: 'asc' | 'desc';
}

export function readSort(query: URLSearchParams): TraceSort {
  const key = SORTS.find((s) => s.key === query.get('sort'))?.key ?? 'timestamp';
  return { key, direction: query.get('dir') === 'asc' ? 'asc' : 'desc' };
}

/** The rows in the chosen order; missing values last either way, ties in the API's order. */
export function sortTraces<T extends SortableTrace>(traces: T[], sort: TraceSort): T[] {
  const column = SORTS.find((s) => s.key === sort.key)!;
  const sign = sort.direction === 'asc' ? 1 : -1;
  return traces
    .map((trace, position) => ({ trace, position, value: column.value(trace) }))
    .sort((a, b) => {
      const missingA = a.value === null || a.value === '';
      const missingB = b.value === null || b.value === '';
      if (missingA || missingB) return missingA === missingB ? a.position - b.position : missingA ? 1 : -1;
      const order = typeof a.value === 'number' && typeof b.value === 'number' ? a.value - b.value : String(a.value).localeCompare(String(b.value));
      return order === 0 ? a.position - b.position : sign * order;
    })
    .map((row) => row.trace);
}

