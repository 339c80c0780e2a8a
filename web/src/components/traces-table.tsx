import type { TraceListItem } from '../api/types.js';
import { formatCount, formatDateTime, formatMs, formatUsd, formatUsdColumn } from '../format.js';
import { threadHref } from '../pages/thread.js';
import { navigate, setQuery } from '../router.js';
import { Link } from './link.js';
import { MatchSnippet } from './match-snippet.js';
import { SORTS, type SortKey, type TraceSort } from '../trace-sort.js';

/**
 * The trace list's table: every row is a link to its trace (a click anywhere on it; the time is
 * also a real link for the keyboard, middle-click and "copy link"), and its headers sort the page
 * shown (trace-sort.ts).
 */
function SortHeader({ column, sort }: { column: (typeof SORTS)[number]; sort: TraceSort }) {
  const active = sort.key === column.key;
  const next = active ? (sort.direction === 'asc' ? 'desc' : 'asc') : column.numeric || column.key === 'timestamp' ? 'desc' : 'asc';
  return (
    <th scope="col" class={column.numeric ? 'num' : undefined} aria-sort={active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        class="sort-button"
        data-column={column.key}
        onClick={() => setQuery({ sort: column.key === 'timestamp' && next === 'desc' ? null : column.key, dir: next === 'desc' ? null : 'asc' }, { replace: true })}
      >
        {column.label}
        <span class="sort-mark" aria-hidden="true">
          {active ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}
        </span>
      </button>
    </th>
  );
}

export function TracesTable({ projectId, traces, sort }: { projectId: string; traces: TraceListItem[]; sort: TraceSort }) {
  const header = (key: SortKey) => <SortHeader column={SORTS.find((s) => s.key === key)!} sort={sort} />;
  return (
    <div class="table-wrap">
      <table class="data-table card-table" data-testid="traces-table">
        <thead>
          <tr>
            {header('timestamp')}
            {header('agent')}
            <th scope="col">Input</th>
            {header('duration')}
            {header('spans')}
            {header('tokens')}
            {header('cost')}
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {traces.map((trace) => {
            const href = `/p/${projectId}/traces/${trace.id}`;
            return (
              <tr
                key={trace.id}
                data-trace-id={trace.id}
                data-nav-row
                class={`row-link${trace.has_error ? ' row-error' : ''}`}
                onClick={(event) => {
                  // Links inside the row (the time, the thread) keep their own target.
                  if ((event.target as HTMLElement).closest('a, button') || window.getSelection()?.toString()) return;
                  navigate(href);
                  window.scrollTo(0, 0);
                }}
              >
                <td class="nowrap" data-label="Time">
                  <Link href={href} class="row-main-link">
                    {formatDateTime(trace.timestamp)}
                  </Link>
                </td>
                <td data-label="Agent">
                  {trace.agent_name || '—'}
                  {trace.thread_id && (
                    <Link href={threadHref(projectId, trace.thread_id)} class="thread-chip" title={`Thread ${trace.thread_id}`}>
                      thread
                    </Link>
                  )}
                </td>
                <td class="truncate" title={trace.agent_input_display} data-label="Input">
                  {trace.agent_input_display || '—'}
                  {trace.match && <MatchSnippet match={trace.match} />}
                </td>
                <td class="num" data-label="Duration">
                  {formatMs(trace.total_duration_ms)}
                </td>
                <td class="num" data-label="Spans">
                  {formatCount(trace.span_count)}
                </td>
                <td class="num" data-label="Tokens">
                  {formatCount(trace.total_tokens)}
                </td>
                <td class="num" data-label="Est. cost" title={formatUsd(trace.estimated_cost_usd)}>
                  {formatUsdColumn(trace.estimated_cost_usd)}
                </td>
                <td data-label="Status">
                  {trace.has_error ? <span class="badge badge-error">error</span> : <span class="badge badge-ok">ok</span>}
                  {!trace.settled && (
                    <span class="badge badge-settling" title="Spans are still arriving: tokens, cost and tool calls appear once the trace settles" data-testid="trace-settling">
                      settling
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
