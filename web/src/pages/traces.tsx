import { useState } from 'preact/hooks';
import { listAgentNames, listTraces, type TraceFilters } from '../api/endpoints.js';
import type { TraceListItem } from '../api/types.js';
import { ExporterSnippet } from '../components/exporter-snippet.js';
import { FilterBar } from '../components/filter-bar.js';
import { Link } from '../components/link.js';
import { Empty, Loaded } from '../components/states.js';
import { Freshness } from '../components/freshness.js';
import { formatCount, formatDateTime, formatMs, formatUsd } from '../format.js';
import { navigate, setQuery } from '../router.js';
import { useResource } from '../use-resource.js';

const PAGE_SIZE = 50;

function localInput(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString().replace('.000Z', 'Z');
}

/** GET /api/projects/{pid}/traces: newest first, filters agent_name, has_error, thread_id, start/end, cursor. */
export function TracesPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const filters: TraceFilters = {
    agent_name: query.get('agent_name') ?? undefined,
    has_error: query.get('has_error') ?? undefined,
    thread_id: query.get('thread_id') ?? undefined,
    start: query.get('start') ?? undefined,
    end: query.get('end') ?? undefined,
    cursor: query.get('cursor') ?? undefined,
    limit: PAGE_SIZE,
  };
  const filtered = Boolean(filters.agent_name || filters.has_error || filters.thread_id || filters.start || filters.end);
  const traces = useResource(() => listTraces(projectId, filters), [projectId, query.toString()]);
  const agents = useResource(() => listAgentNames(projectId), [projectId]);
  const [thread, setThread] = useState(filters.thread_id ?? '');

  const change = (name: string, value: string | null) => setQuery({ [name]: value, cursor: null });

  return (
    <>
      <div class="page-head">
        <h1>Traces</h1>
        <Freshness data={traces.data} />
      </div>
      <FilterBar label="Trace filters">
        <label class="inline-field">
          Agent{' '}
          <select value={filters.agent_name ?? ''} onChange={(e) => change('agent_name', (e.target as HTMLSelectElement).value)} data-testid="filter-agent">
            <option value="">All agents</option>
            {(agents.data?.agent_names ?? []).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
            {filters.agent_name && !(agents.data?.agent_names ?? []).includes(filters.agent_name) && <option value={filters.agent_name}>{filters.agent_name}</option>}
          </select>
        </label>
        <label class="inline-field">
          Outcome{' '}
          <select value={filters.has_error ?? ''} onChange={(e) => change('has_error', (e.target as HTMLSelectElement).value)} data-testid="filter-error">
            <option value="">Any</option>
            <option value="true">With errors</option>
            <option value="false">Without errors</option>
          </select>
        </label>
        <label class="inline-field">
          Thread{' '}
          <input
            type="search"
            value={thread}
            placeholder="thread id"
            onInput={(e) => setThread((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') change('thread_id', thread.trim());
            }}
            onBlur={() => thread.trim() !== (filters.thread_id ?? '') && change('thread_id', thread.trim())}
          />
        </label>
        <label class="inline-field">
          From <input type="datetime-local" value={localInput(filters.start ?? null)} onChange={(e) => change('start', fromLocalInput((e.target as HTMLInputElement).value))} />
        </label>
        <label class="inline-field">
          To <input type="datetime-local" value={localInput(filters.end ?? null)} onChange={(e) => change('end', fromLocalInput((e.target as HTMLInputElement).value))} />
        </label>
        {filtered && (
          <button type="button" class="link-button" onClick={() => navigate(`/p/${projectId}/traces`)}>
            Clear filters
          </button>
        )}
      </FilterBar>
      <Loaded resource={traces} label="Loading traces…">
        {(page) =>
          page.traces.length === 0 ? (
            filtered || filters.cursor ? (
              <Empty>
                <p>No trace matches these filters.</p>
              </Empty>
            ) : (
              <ExporterSnippet projectId={projectId} />
            )
          ) : (
            <>
              <div class="table-wrap">
                <table class="data-table" data-testid="traces-table">
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Input</th>
                      <th scope="col" class="num">
                        Duration
                      </th>
                      <th scope="col" class="num">
                        Spans
                      </th>
                      <th scope="col" class="num">
                        Tokens
                      </th>
                      <th scope="col" class="num">
                        Est. cost
                      </th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.traces.map((trace: TraceListItem) => (
                      <tr key={trace.id} data-trace-id={trace.id} class={trace.has_error ? 'row-error' : undefined}>
                        <td class="nowrap">
                          <Link href={`/p/${projectId}/traces/${trace.id}`}>{formatDateTime(trace.timestamp)}</Link>
                        </td>
                        <td>{trace.agent_name || '—'}</td>
                        <td class="truncate" title={trace.agent_input_display}>
                          {trace.agent_input_display || '—'}
                        </td>
                        <td class="num">{formatMs(trace.total_duration_ms)}</td>
                        <td class="num">{formatCount(trace.span_count)}</td>
                        <td class="num">{formatCount(trace.total_tokens)}</td>
                        <td class="num">{formatUsd(trace.estimated_cost_usd)}</td>
                        <td>{trace.has_error ? <span class="badge badge-error">error</span> : <span class="badge badge-ok">ok</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <nav class="pager" aria-label="Trace pages">
                {filters.cursor && (
                  <button type="button" onClick={() => setQuery({ cursor: null })}>
                    ← Newest
                  </button>
                )}
                {page.next_cursor && (
                  <button type="button" onClick={() => setQuery({ cursor: page.next_cursor! })}>
                    Older →
                  </button>
                )}
              </nav>
            </>
          )
        }
      </Loaded>
    </>
  );
}
