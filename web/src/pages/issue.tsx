import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { getIssue, issueAction, listOccurrences, listUsers, type IssueAction } from '../api/endpoints.js';
import type { Issue, IssueOccurrence } from '../api/types.js';
import { Link } from '../components/link.js';
import { ErrorPanel, Loaded, Loading } from '../components/states.js';
import { StatusBadge, TagChip } from '../components/status-badge.js';
import { TicketPanel } from '../components/ticket-panel.js';
import { formatCount, formatDateTime, parseApiDate } from '../format.js';
import { useResource } from '../use-resource.js';

const ACTIONS: { action: IssueAction; label: string; allowed: Issue['status'][] }[] = [
  { action: 'start-review', label: 'Start review', allowed: ['open'] },
  { action: 'resolve', label: 'Resolve', allowed: ['open', 'in_progress'] },
  { action: 'dismiss', label: 'Dismiss', allowed: ['open', 'in_progress'] },
  { action: 'reopen', label: 'Reopen', allowed: ['resolved', 'dismissed'] },
];

function Actions({ issue, onDone }: { issue: Issue; onDone: (message: string) => void }) {
  const [busy, setBusy] = useState<IssueAction | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: IssueAction, label: string) => {
    setBusy(action);
    setError(null);
    try {
      await issueAction(issue.id, action);
      onDone(`${label}: done.`);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <div class="actions" role="group" aria-label="Issue actions">
      {ACTIONS.filter((a) => a.allowed.includes(issue.status)).map((a) => (
        <button type="button" key={a.action} data-action={a.action} class={a.action === 'start-review' ? 'primary' : undefined} disabled={busy !== null} onClick={() => void run(a.action, a.label)}>
          {busy === a.action ? `${a.label}…` : a.label}
        </button>
      ))}
      {error && (
        <p class="field-error" role="alert" data-testid="action-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** Occurrences newest first by when they happened (the API pages them in the order they were recorded). */
function byTime(rows: IssueOccurrence[]): IssueOccurrence[] {
  const at = (o: IssueOccurrence) => parseApiDate(o.occurred_at ?? '')?.getTime() ?? 0;
  return rows.map((o, i) => ({ o, i })).sort((a, b) => at(b.o) - at(a.o) || a.i - b.i).map(({ o }) => o);
}

/** The assignee by name when the key may list the tenant's users (admin scope), else by id. */
function Assignee({ userId }: { userId: string | null }) {
  const users = useResource(() => (userId ? listUsers().catch(() => null) : Promise.resolve(null)), [userId]);
  if (!userId) return <>Unassigned</>;
  const user = users.data?.users.find((u) => u.id === userId);
  return user ? (
    <span title={userId}>
      {user.name}
      {user.email ? <span class="muted"> ({user.email})</span> : null}
    </span>
  ) : (
    <code>{userId}</code>
  );
}

function OccurrenceList({ issueId, projectId }: { issueId: string; projectId: string }) {
  const [rows, setRows] = useState<IssueOccurrence[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [state, setState] = useState<{ loading: boolean; error: unknown }>({ loading: true, error: null });
  const load = (cursor?: string) => {
    setState({ loading: true, error: null });
    listOccurrences(issueId, cursor).then(
      (page) => {
        setRows((previous) => (cursor ? [...previous, ...page.occurrences] : page.occurrences));
        setNext(page.next_cursor);
        setState({ loading: false, error: null });
      },
      (error) => setState({ loading: false, error }),
    );
  };
  useEffect(() => load(), [issueId]);
  return (
    <section class="panel" aria-labelledby="occurrences-title">
      <h2 id="occurrences-title">
        Occurrences <span class="muted heading-note">newest first</span>
      </h2>
      {rows.length === 0 && !state.loading && !state.error && <p class="muted">No occurrences recorded.</p>}
      {rows.length > 0 && (
        <div class="table-wrap">
          <table class="data-table" data-testid="occurrences-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Trace</th>
                <th scope="col">Span</th>
                <th scope="col">Error</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {byTime(rows).map((o, i) => (
                <tr key={`${o.trace_id}-${o.span_id}-${i}`}>
                  <td>{formatDateTime(o.occurred_at)}</td>
                  <td>
                    <Link href={`/p/${projectId}/traces/${o.trace_id}`} data-trace-id={o.trace_id}>
                      <code>{(o.otel_trace_id || o.trace_id).slice(0, 16)}…</code>
                    </Link>
                  </td>
                  <td>
                    {o.span_name ? <code>{o.span_name}</code> : '—'}
                    {o.tool_name ? <span class="muted"> (tool {o.tool_name})</span> : null}
                  </td>
                  <td>{o.error_type || '—'}</td>
                  <td class="truncate" title={o.message}>
                    {o.message || '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {state.loading && <Loading label="Loading occurrences…" />}
      {state.error ? <ErrorPanel error={state.error} retry={() => load()} /> : null}
      {next && !state.loading && (
        <button type="button" onClick={() => load(next)}>
          More occurrences
        </button>
      )}
    </section>
  );
}

export function IssuePage({ projectId, issueId }: { projectId: string; issueId: string }) {
  const issue = useResource(() => getIssue(issueId), [issueId]);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      <p class="back">
        <Link href={`/p/${projectId}/issues`}>← Issues</Link>
      </p>
      <Loaded resource={issue} label="Loading issue…">
        {(data) => (
          <>
            <h1 data-testid="issue-title">{data.title}</h1>
            <div class="issue-status-row">
              <StatusBadge status={data.status} />
              {data.flagged && <span class="badge badge-flag">flagged</span>}
              {data.tags.map((t) => (
                <TagChip key={t.id} name={t.name} color={t.color} />
              ))}
            </div>
            <p class="sr-status" role="status" aria-live="polite">
              {notice}
            </p>
            <Actions
              issue={data}
              onDone={(message) => {
                setNotice(message);
                issue.reload();
              }}
            />
            {data.description && <p class="issue-description">{data.description}</p>}
            <dl class="facts">
              <dt>Occurrences</dt>
              <dd data-testid="issue-occurrence-count">{formatCount(data.occurrence_count)}</dd>
              <dt>First seen</dt>
              <dd>{formatDateTime(data.first_seen_at)}</dd>
              <dt>Last seen</dt>
              <dd>{formatDateTime(data.last_seen_at)}</dd>
              <dt>Assignee</dt>
              <dd data-testid="issue-assignee" data-user-id={data.assignee_user_id ?? ''}>
                <Assignee userId={data.assignee_user_id} />
              </dd>
              {data.fingerprint && (
                <>
                  <dt>Fingerprint</dt>
                  <dd>
                    <code>{data.fingerprint}</code>
                  </dd>
                </>
              )}
            </dl>
          </>
        )}
      </Loaded>
      <OccurrenceList issueId={issueId} projectId={projectId} />
      <TicketPanel issueId={issueId} />
    </>
  );
}
