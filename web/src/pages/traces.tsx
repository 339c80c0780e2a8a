import { useState } from 'preact/hooks';
import { listAgentNames, listTraces, type TraceFilters } from '../api/endpoints.js';
import { AppliedInput } from '../components/applied-input.js';
import { ExporterSnippet } from '../components/exporter-snippet.js';
import { FilterBar, RangeFilter, SuggestedFilter } from '../components/filter-bar.js';
import { Empty, Loaded } from '../components/states.js';
import { Freshness } from '../components/freshness.js';
import { plural } from '../format.js';
import { navigate, setQuery } from '../router.js';
import { isoSecond } from '../time-window.js';
import { fromDateInput, toDateInput, zoneName } from '../time-zone.js';
import { TracesTable } from '../components/traces-table.js';
import { readSort, sortTraces, SORTS } from '../trace-sort.js';
import { useResource } from '../use-resource.js';

const PAGE_SIZE = 50;

function inputInstant(value: string): string | null {
  const date = fromDateInput(value);
  return date ? isoSecond(date) : null;
}

/** The list's filters kept in the URL under the API's own parameter names (cursor and sort aside). */
const FILTER_PARAMS = [
  'q', 'agent_name', 'has_error', 'thread_id', 'model', 'tool', 'release',
  'min_duration_ms', 'max_duration_ms', 'min_cost_usd', 'max_cost_usd', 'start', 'end',
] as const;

/**
 * GET /api/projects/{pid}/traces: newest first, with the filters in the URL (FILTER_PARAMS), the
 * cursor, and include_total for the count of every matching trace.
 */
export function TracesPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const filters: TraceFilters = { cursor: query.get('cursor') ?? undefined, limit: PAGE_SIZE, include_total: true };
  for (const name of FILTER_PARAMS) filters[name] = query.get(name) ?? undefined;
  const filtered = FILTER_PARAMS.some((name) => Boolean(filters[name]));
  // Sorting orders the page on screen: it does not ask the API again.
  const traces = useResource(() => listTraces(projectId, filters), [projectId, JSON.stringify(filters)]);
  const agents = useResource(() => listAgentNames(projectId), [projectId]);
  const [search, setSearch] = useState(filters.q ?? '');
  const rows = traces.data?.traces ?? [];

  const change = (name: string, value: string | null) => setQuery({ [name]: value, cursor: null });
  const sort = readSort(query);

  return (
    <>
      <div class="page-head">
        <h1>Traces</h1>
        <Freshness data={traces.data} />
      </div>
      <FilterBar label="Trace filters">
        <label class="inline-field search-field">
          Search{' '}
          <input
            type="search"
            value={search}
            placeholder='words, "a phrase", -word, tool:name'
            maxLength={1000}
            aria-describedby="search-help"
            onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') change('q', search.trim() || null);
            }}
            onBlur={() => search.trim() !== (filters.q ?? '') && change('q', search.trim() || null)}
            data-testid="filter-search"
            data-shortcut="filter"
          />
          <span id="search-help" class="sr-only">
            Searches what the traces said: input, output, tools, errors, span names and attributes. Press Enter to search.
          </span>
        </label>
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
          Thread <AppliedInput value={filters.thread_id ?? ''} placeholder="thread id" onApply={(v) => change('thread_id', v)} data-testid="filter-thread" />
        </label>
        <SuggestedFilter label="Model" name="model" placeholder="model name" value={filters.model} options={rows.flatMap((t) => t.models_used)} onApply={change} />
        <label class="inline-field">
          Tool <AppliedInput value={filters.tool ?? ''} placeholder="tool name" maxLength={200} onApply={(v) => change('tool', v)} data-testid="filter-tool" />
        </label>
        <SuggestedFilter label="Release" name="release" placeholder="release" value={filters.release} options={rows.map((t) => t.release)} onApply={change} />
        <RangeFilter label="Duration (ms)" names={['min_duration_ms', 'max_duration_ms']} filters={filters} onApply={change} />
        <RangeFilter label="Cost (USD)" names={['min_cost_usd', 'max_cost_usd']} filters={filters} onApply={change} />
        <label class="inline-field">
          From ({zoneName()}) <input type="datetime-local" data-testid="filter-start" value={toDateInput(filters.start ?? null)} onChange={(e) => change('start', inputInstant((e.target as HTMLInputElement).value))} />
        </label>
        <label class="inline-field">
          To ({zoneName()}) <input type="datetime-local" data-testid="filter-end" value={toDateInput(filters.end ?? null)} onChange={(e) => change('end', inputInstant((e.target as HTMLInputElement).value))} />
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
              <p class="list-count muted" data-testid="traces-count" aria-live="polite">
                {page.total !== undefined && (
                  <strong data-testid="traces-total">
                    {plural(page.total, 'trace')} {filtered ? (page.total === 1 ? 'matches' : 'match') : 'in all'} ·{' '}
                  </strong>
                )}
                {plural(page.traces.length, 'trace')} on this page{page.next_cursor ? ', older ones on the next' : ''}
                {sort.key !== 'timestamp' || sort.direction !== 'desc' ? ` · sorted by ${SORTS.find((s) => s.key === sort.key)?.label.toLowerCase()} within this page` : ''}
              </p>
              <TracesTable projectId={projectId} traces={sortTraces(page.traces, sort)} sort={sort} />
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
