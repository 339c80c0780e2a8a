import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { getRetention, listDeletions, setRetention } from '../api/endpoints.js';
import type { Deletion, Retention } from '../api/types.js';
import { formatCount, formatDateTime } from '../format.js';
import { useResource } from '../use-resource.js';
import { Empty, Loaded } from './states.js';

const SOURCE_TEXT: Record<Retention['source'], string> = {
  project: "this project's own setting",
  tenant: "the organization's default",
  default: 'the default (nothing set)',
};

/** The project's retention, and a form that changes it (admin; docs/data-lifecycle.md "Retention"). */
function RetentionForm({ current, projectId, onSaved }: { current: Retention; projectId: string; onSaved: (r: Retention) => void }) {
  const [analytics, setAnalytics] = useState(String(current.analytics_days));
  const [content, setContent] = useState(String(current.content_days));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const number = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement).value);
    setSaved(false);
  };
  return (
    <form
      class="admin-form"
      data-testid="retention-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        setRetention(projectId, { analytics_days: Number(analytics), content_days: Number(content) })
          .then((r) => {
            setSaved(true);
            onSaved(r);
          })
          .catch((err) => setError(describeError(err)))
          .finally(() => setBusy(false));
      }}
    >
      <label class="inline-field">
        Figures kept <input type="number" min={1} max={90} required value={analytics} onInput={number(setAnalytics)} data-testid="retention-analytics" size={3} /> days
      </label>
      <label class="inline-field">
        Content kept <input type="number" min={1} max={90} required value={content} onInput={number(setContent)} data-testid="retention-content" size={3} /> days
      </label>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save retention'}
      </button>
      <p class={error ? 'field-error' : 'muted'} role={error ? 'alert' : 'status'} aria-live="polite" data-testid="retention-result">
        {error ?? (saved ? 'Saved. Stored data follows the new setting.' : '')}
      </p>
    </form>
  );
}

function RetentionPanel({ projectId }: { projectId: string }) {
  const retention = useResource(() => getRetention(projectId), [projectId]);
  return (
    <Loaded resource={retention} label="Loading retention…">
      {(r) => (
        <section class="panel" data-testid="retention-panel">
          <dl class="facts">
            <dt>Figures</dt>
            <dd data-testid="retention-analytics-days">{r.analytics_days} days: durations, tokens, models, costs, statuses</dd>
            <dt>Content</dt>
            <dd data-testid="retention-content-days">{r.content_days} days: inputs, outputs, messages, attributes, log records</dd>
            <dt>From</dt>
            <dd data-testid="retention-source">{SOURCE_TEXT[r.source]}</dd>
          </dl>
          <RetentionForm key={`${r.analytics_days}/${r.content_days}`} current={r} projectId={projectId} onSaved={() => retention.reload()} />
        </section>
      )}
    </Loaded>
  );
}

const STATUS_CLASS: Record<Deletion['status'], string> = { queued: 'badge-flag', running: 'badge-flag', succeeded: 'badge-ok' };

/** What a deletion selected, in a few words. */
function selection(d: Deletion): string {
  if (d.kind === 'traces') return `${formatCount(d.trace_ids?.length ?? 0)} trace(s)`;
  if (d.kind === 'thread') return `thread ${d.thread_id ?? ''}`;
  if (d.kind === 'before') return `traces before ${formatDateTime(d.before)}`;
  return 'the whole project';
}

function DeletionTable({ deletions }: { deletions: Deletion[] }) {
  if (deletions.length === 0) {
    return (
      <Empty>
        <p>No deletions yet. Ask for one with <code>POST /api/projects/{'{project_id}'}/deletions</code> (docs/data-lifecycle.md).</p>
      </Empty>
    );
  }
  return (
    <div class="table-wrap">
      <table class="data-table" data-testid="deletion-list">
        <caption class="sr-only">Deletions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Asked</th>
            <th scope="col">What</th>
            <th scope="col">Status</th>
            <th scope="col">Traces deleted</th>
            <th scope="col">Finished / last error</th>
          </tr>
        </thead>
        <tbody>
          {deletions.map((d) => (
            <tr key={d.id} data-deletion-id={d.id}>
              <td>{formatDateTime(d.created_at)}</td>
              <td>{selection(d)}</td>
              <td>
                <span class={`badge ${STATUS_CLASS[d.status]}`} data-status={d.status}>
                  {d.status}
                </span>
              </td>
              <td>{formatCount(d.traces_deleted)}</td>
              <td class="truncate" title={d.last_error ?? undefined}>
                {d.finished_at ? formatDateTime(d.finished_at) : (d.last_error ?? '—')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Project settings' data section: how long data is kept, and the deletions asked for (docs/data-lifecycle.md). */
export function DataLifecycle({ projectId }: { projectId: string }) {
  const deletions = useResource(() => listDeletions(projectId), [projectId]);
  return (
    <>
      <h2>Retention</h2>
      <p class="muted">How long this project keeps its data. Content goes first; the figures stay until their own limit (at most 90 days).</p>
      <RetentionPanel projectId={projectId} />
      <h2>Deletions</h2>
      <Loaded resource={deletions} label="Loading deletions…">
        {(data) => <DeletionTable deletions={data.deletions} />}
      </Loaded>
    </>
  );
}
