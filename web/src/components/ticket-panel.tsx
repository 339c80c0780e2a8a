import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { getTicketLink, linkTicket, previewTicket } from '../api/endpoints.js';
import { formatDateTime } from '../format.js';
import { useResource } from '../use-resource.js';
import { ErrorPanel, Loading } from './states.js';

function draftTitle(preview: Record<string, unknown>): string {
  const draft = (preview.ticket ?? preview.draft ?? preview.ticket_draft ?? {}) as Record<string, unknown>;
  return typeof draft.title === 'string' ? draft.title : '';
}

/** The issue's ticket in the tracker (GET /api/issues/{id}/tracker-ticket), or a way to create one. */
/**
 * A tracker's ticket opens in the tracker; Lookout's own (local) tracker's tickets have an API URL,
 * which a browser tab cannot open without the key, so they are shown here instead of linked.
 */
function isExternal(url: string): boolean {
  return /^https?:\/\//i.test(url) && !url.startsWith(`${window.location.origin}/api/`);
}

export function TicketPanel({ issueId }: { issueId: string }) {
  const link = useResource(() => getTicketLink(issueId), [issueId]);
  const [preview, setPreview] = useState<Record<string, unknown> | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);


  const startPreview = async () => {
    setBusy(true);
    setError(null);
    try {
      setPreview(await previewTicket(issueId));
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const confirm = async () => {
    if (!preview) return;
    setBusy(true);
    setError(null);
    try {
      await linkTicket(issueId, String(preview.preview_token));
      setPreview(null);
      link.reload();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  let body;
  if (link.state === 'error' && !link.data) body = <ErrorPanel error={link.error} retry={link.reload} />;
  else if (!link.data) body = <Loading label="Loading ticket link…" />;
  else if (!link.data.link) {
    body = (
      <>
        <p data-testid="ticket-none">No ticket is linked to this issue.</p>
        {preview ? (
          <div class="ticket-preview">
            <p>
              New ticket: <strong>{draftTitle(preview) || '(untitled)'}</strong>
            </p>
            <button type="button" class="primary" onClick={() => void confirm()} disabled={busy}>
              Create and link ticket
            </button>{' '}
            <button type="button" onClick={() => setPreview(null)} disabled={busy}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" onClick={() => void startPreview()} disabled={busy}>
            Create a ticket…
          </button>
        )}
      </>
    );
  } else {
    const { ticket } = link.data.link;
    body = (
      <dl class="facts" data-testid="ticket-link">
        <dt>Ticket</dt>
        <dd>
          {isExternal(ticket.url) ? (
            <a href={ticket.url} target="_blank" rel="noopener noreferrer">
              {ticket.identifier}
            </a>
          ) : (
            <strong data-testid="local-ticket" title="A ticket of Lookout's own tracker: it lives on this page">
              {ticket.identifier}
            </strong>
          )}{' '}
          {ticket.title}
        </dd>
        <dt>State</dt>
        <dd>{ticket.state_name || '—'}</dd>
        <dt>Assignee</dt>
        <dd>{ticket.tracker_assignee?.name || '—'}</dd>
        <dt>Sync</dt>
        <dd>
          {link.data.link.sync_status}
          {link.data.link.last_error_message ? ` — ${link.data.link.last_error_message}` : ''}
        </dd>
        <dt>Linked</dt>
        <dd>{formatDateTime(link.data.link.linked_at)}</dd>
        {link.data.pull_requests && link.data.pull_requests.length > 0 && (
          <>
            <dt>Pull requests</dt>
            <dd>
              {link.data.pull_requests.map((pr) => (
                <div key={pr.id}>
                  <a href={pr.url} target="_blank" rel="noopener noreferrer">
                    {pr.title}
                  </a>
                </div>
              ))}
            </dd>
          </>
        )}
      </dl>
    );
  }
  return (
    <section class="panel" aria-labelledby="ticket-title">
      <h2 id="ticket-title">Ticket</h2>
      {body}
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
