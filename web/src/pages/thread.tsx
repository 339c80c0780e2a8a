import { listTraces } from '../api/endpoints.js';
import type { TraceListItem } from '../api/types.js';
import { Link } from '../components/link.js';
import { Empty, Loaded } from '../components/states.js';
import { formatCount, formatDateTime, formatMs, formatUsd, plural } from '../format.js';
import { useResource } from '../use-resource.js';

/** Runs of one thread read at most, newest first from the API, then shown oldest first. */
export const THREAD_RUN_LIMIT = 1000;
const PAGE = 200;

export function threadHref(projectId: string, threadId: string): string {
  return `/p/${projectId}/threads/${encodeURIComponent(threadId)}`;
}

/** Every run of the thread (up to THREAD_RUN_LIMIT, the most recent), following the list's cursor. */
async function loadThread(projectId: string, threadId: string): Promise<{ runs: TraceListItem[]; more: boolean }> {
  const runs: TraceListItem[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listTraces(projectId, { thread_id: threadId, limit: PAGE, cursor });
    runs.push(...page.traces);
    if (!page.next_cursor || runs.length >= THREAD_RUN_LIMIT) return { runs: runs.reverse(), more: Boolean(page.next_cursor) };
    cursor = page.next_cursor;
  }
}

/**
 * A thread (a conversation, a session): its agent runs in the order they happened, each with what
 * it was asked, its outcome and figures, and a link to its trace.
 */
export function ThreadPage({ projectId, threadId }: { projectId: string; threadId: string }) {
  const thread = useResource(() => loadThread(projectId, threadId), [projectId, threadId]);
  return (
    <>
      <p class="back">
        <Link href={`/p/${projectId}/traces?thread_id=${encodeURIComponent(threadId)}`}>← Traces of this thread</Link>
      </p>
      <h1>
        Thread <code data-testid="thread-id">{threadId}</code>
      </h1>
      <Loaded resource={thread} label="Loading the thread's runs…">
        {({ runs, more }) =>
          runs.length === 0 ? (
            <Empty>
              <p>No run of this project belongs to this thread.</p>
            </Empty>
          ) : (
            <>
              <p class="muted" data-testid="thread-count">
                {plural(runs.length, 'run')}, oldest first{more ? ` (the ${formatCount(THREAD_RUN_LIMIT)} most recent)` : ''}.
              </p>
              <ol class="thread-runs" data-testid="thread-runs">
                {runs.map((run, i) => (
                  <li key={run.id} data-nav-row data-trace-id={run.id} class={run.has_error ? 'thread-run run-error' : 'thread-run'}>
                    <Link href={`/p/${projectId}/traces/${run.id}`} class="thread-run-link">
                      <span class="thread-run-head">
                        <span class="thread-run-number">#{i + 1}</span> <span>{formatDateTime(run.timestamp)}</span> · <strong>{run.agent_name || '—'}</strong>{' '}
                        {run.has_error ? <span class="badge badge-error">error</span> : <span class="badge badge-ok">ok</span>}
                      </span>
                      <span class="thread-run-input">{run.agent_input_display || '—'}</span>
                      <span class="thread-run-figures muted">
                        {formatMs(run.total_duration_ms)} · {plural(run.span_count ?? 0, 'span')} · {formatCount(run.total_tokens)} tokens · {formatUsd(run.estimated_cost_usd)}
                      </span>
                    </Link>
                  </li>
                ))}
              </ol>
            </>
          )
        }
      </Loaded>
    </>
  );
}
