import { listIssueTags, listIssues } from '../api/endpoints.js';
import type { Issue } from '../api/types.js';
import { FilterBar } from '../components/filter-bar.js';
import { Link } from '../components/link.js';
import { SortableTable } from '../components/sortable-table.js';
import { Sparkline } from '../components/sparkline.js';
import { Empty, Loaded } from '../components/states.js';
import { StatusBadge, TagChip } from '../components/status-badge.js';
import { formatCount, formatDateTime } from '../format.js';
import { setQuery } from '../router.js';
import { useResource } from '../use-resource.js';

const STATUS_FILTERS = [
  { value: 'open,in_progress', label: 'Active (open, in review)' },
  { value: 'open', label: 'Open' },
  { value: 'in_progress', label: 'In review' },
  { value: 'resolved', label: 'Resolved' },
  { value: 'dismissed', label: 'Dismissed' },
  { value: 'all', label: 'All' },
];

/** The days of the API's occurrence_trend. */
const TREND_DAYS = 14;

/** An issue's occurrences within the trend's days (the API's daily counts added up). */
const trendTotal = (issue: Issue) => issue.occurrence_trend?.reduce((sum, p) => sum + p.count, 0);

/** The sorts offered (of the page shown; the API lists the newest issues first). */
const SORTS = [
  { value: 'last_seen_at', label: 'Last seen', direction: 'desc' },
  { value: 'occurrence_count', label: 'Occurrences', direction: 'desc' },
  { value: 'first_seen_at', label: 'First seen', direction: 'desc' },
  { value: 'agents', label: 'Agent', direction: 'asc' },
  { value: 'trend', label: `Last ${TREND_DAYS} days`, direction: 'desc' },
  { value: 'status', label: 'Status', direction: 'asc' },
  { value: 'title', label: 'Issue', direction: 'asc' },
] as const;

function readIssueSort(query: URLSearchParams): { key: string; direction: 'asc' | 'desc' } {
  const chosen = SORTS.find((s) => s.value === query.get('sort')) ?? SORTS[0];
  const dir = query.get('dir');
  return { key: chosen.value, direction: dir === 'asc' || dir === 'desc' ? dir : chosen.direction };
}

export function IssuesPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const status = query.get('status') ?? 'open,in_progress';
  const sort = readIssueSort(query);
  const tag = query.get('tag') ?? '';
  const cursor = query.get('cursor') ?? undefined;
  const issues = useResource(
    () => listIssues(projectId, { status: status === 'all' ? undefined : status, tag: tag || undefined, cursor, limit: 50, include_agents: true, include_trend: true }),
    [projectId, status, tag, cursor],
  );
  const tags = useResource(() => listIssueTags(projectId), [projectId]);

  return (
    <>
      <div class="page-head">
        <h1>Issues</h1>
      </div>
      <FilterBar label="Issue filters">
        <label class="inline-field">
          Status{' '}
          <select value={status} onChange={(e) => setQuery({ status: (e.target as HTMLSelectElement).value, cursor: null })} data-testid="filter-status">
            {STATUS_FILTERS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field">
          Tag{' '}
          <select value={tag} onChange={(e) => setQuery({ tag: (e.target as HTMLSelectElement).value, cursor: null })} data-testid="filter-tag">
            <option value="">Any tag</option>
            {(tags.data?.tags ?? []).map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field">
          Sort{' '}
          <select value={sort.key} onChange={(e) => setQuery({ sort: (e.target as HTMLSelectElement).value, dir: null }, { replace: true })} data-testid="issue-sort">
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <Loaded resource={issues} label="Loading issues…">
        {(page) =>
          page.issues.length === 0 ? (
            <Empty>
              <p>No issues match. Issues open by themselves when processed traces fail (same error, span and tool → one issue).</p>
            </Empty>
          ) : (
            <>
              <SortableTable<Issue>
                testId="issues-table"
                rows={page.issues}
                rowKey={(row) => row.id}
                sort={sort}
                onSort={(next) => setQuery({ sort: next.key, dir: next.direction }, { replace: true })}
                navRows
                columns={[
                  {
                    key: 'title',
                    label: 'Issue',
                    value: (row) => row.title,
                    render: (row) => (
                      <>
                        <Link href={`/p/${projectId}/issues/${row.id}`}>{row.title}</Link>
                        {row.flagged && <span class="badge badge-flag">flagged</span>}
                        {row.description && (
                          <span class="issue-message muted truncate" title={row.description}>
                            {row.description}
                          </span>
                        )}
                        {row.tags.length > 0 && (
                          <span class="tag-list">
                            {row.tags.map((t) => (
                              <TagChip key={t.id} name={t.name} color={t.color} />
                            ))}
                          </span>
                        )}
                      </>
                    ),
                  },
                  {
                    key: 'agents',
                    label: 'Agent',
                    value: (row) => row.agent_names?.join(', '),
                    render: (row) => (row.agent_names?.length ? <span class="issue-agents">{row.agent_names.join(', ')}</span> : <span class="muted">—</span>),
                  },
                  { key: 'status', label: 'Status', value: (row) => row.status, render: (row) => <StatusBadge status={row.status} /> },
                  {
                    key: 'trend',
                    label: `Last ${TREND_DAYS} days`,
                    value: trendTotal,
                    render: (row) => (row.occurrence_trend ? <Sparkline points={row.occurrence_trend} label={`in the last ${TREND_DAYS} days (UTC)`} /> : '—'),
                    numeric: true,
                  },
                  { key: 'occurrence_count', label: 'Occurrences', value: (row) => row.occurrence_count, render: (row) => formatCount(row.occurrence_count), numeric: true },
                  { key: 'last_seen_at', label: 'Last seen', value: (row) => row.last_seen_at, render: (row) => formatDateTime(row.last_seen_at) },
                  { key: 'first_seen_at', label: 'First seen', value: (row) => row.first_seen_at, render: (row) => formatDateTime(row.first_seen_at) },
                ]}
              />
              <nav class="pager" aria-label="Issue pages">
                {cursor && (
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
