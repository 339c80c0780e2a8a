import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { createWebhook, listWebhookDeliveries, listWebhooks, rotateWebhookSecret, sendWebhookTest, updateWebhook } from '../api/endpoints.js';
import { ExportSection } from '../components/export-section.js';
import { DataLifecycle } from '../components/data-lifecycle.js';
import { SecretOnce } from '../components/secret-once.js';
import type { WebhookDelivery, WebhookEndpoint } from '../api/types.js';
import { Empty, Loaded } from '../components/states.js';
import { formatDateTime } from '../format.js';
import { useResource } from '../use-resource.js';

/** How many attempts each endpoint shows; the full log is GET /api/webhooks/{id}/deliveries. */
const LAST_DELIVERIES = 5;

const STATUS_CLASS: Record<WebhookDelivery['status'], string> = {
  succeeded: 'badge-ok',
  failed: 'badge-error',
  gave_up: 'badge-error',
  pending: 'badge-flag',
};

function DeliveryStatus({ status }: { status: WebhookDelivery['status'] }) {
  return (
    <span class={`badge ${STATUS_CLASS[status]}`} data-status={status}>
      {status.replace('_', ' ')}
    </span>
  );
}

function DeliveryTable({ deliveries }: { deliveries: WebhookDelivery[] }) {
  if (deliveries.length === 0) return <p class="muted">No deliveries yet.</p>;
  return (
    <div class="table-wrap">
      <table class="data-table" data-testid="webhook-deliveries">
        <caption class="sr-only">Last deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Queued</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Response</th>
            <th scope="col">Error / next attempt</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id} data-delivery-id={d.id}>
              <td>{formatDateTime(d.created_at)}</td>
              <td>
                <code>{d.event_type}</code>
              </td>
              <td>{d.attempt}</td>
              <td>
                <DeliveryStatus status={d.status} />
              </td>
              <td>{d.response_status ?? '—'}</td>
              <td class="truncate" title={d.error ?? undefined}>
                {d.status === 'pending' ? (
                  <span class="muted">due {formatDateTime(d.next_attempt_at)}</span>
                ) : (
                  <>
                    {d.error ?? '—'}
                    {d.next_attempt_at ? <span class="muted"> · retry {formatDateTime(d.next_attempt_at)}</span> : null}
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The events an endpoint can subscribe to (docs/webhooks.md); '*' is every one. */
const EVENTS = ['*', 'issue.created', 'issue.reopened', 'issue.resolved', 'issue.dismissed', 'issue.review_started', 'monitor.activated'];

/** Add an endpoint, or edit one's URL, events and description. */
function WebhookForm({ initial, submitLabel, onSubmit, onCancel }: { initial?: WebhookEndpoint; submitLabel: string; onSubmit: (value: { url: string; events: string[]; description: string }) => Promise<void>; onCancel?: () => void }) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [events, setEvents] = useState<string[]>(initial?.events ?? ['*']);
  const [description, setDescription] = useState(initial?.description ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const toggle = (event: string) => setEvents((list) => (list.includes(event) ? list.filter((e) => e !== event) : [...list, event]));
  return (
    <form
      class="admin-form webhook-form"
      data-testid="webhook-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        onSubmit({ url: url.trim(), events, description: description.trim() })
          .catch((err) => setError(describeError(err)))
          .finally(() => setBusy(false));
      }}
    >
      <label class="inline-field">
        URL <input type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} data-testid="webhook-url-input" size={40} />
      </label>
      <label class="inline-field">
        Description <input value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <fieldset class="event-choices">
        <legend>Events</legend>
        {EVENTS.map((event) => (
          <label key={event} class="inline-field">
            <input type="checkbox" checked={events.includes(event)} onChange={() => toggle(event)} value={event} /> {event === '*' ? 'every event' : event}
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || events.length === 0}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {error && (
        <p class="field-error" role="alert" data-testid="webhook-form-error">
          {error}
        </p>
      )}
    </form>
  );
}

function WebhookCard({ endpoint, onChanged }: { endpoint: WebhookEndpoint; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const act = async (work: () => Promise<void>) => {
    setActionError(null);
    try {
      await work();
    } catch (error) {
      setActionError(describeError(error));
    }
  };
  const deliveries = useResource(() => listWebhookDeliveries(endpoint.id, LAST_DELIVERIES), [endpoint.id]);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const sendTest = async () => {
    setBusy(true);
    setResult(null);
    try {
      const delivery = await sendWebhookTest(endpoint.id);
      const text =
        delivery.status === 'succeeded'
          ? `Test event delivered (HTTP ${delivery.response_status}).`
          : delivery.status === 'pending'
            ? 'Test event queued; no worker has tried it yet.'
            : `Test event failed: ${delivery.error ?? 'no answer'}.`;
      setResult({ ok: delivery.status === 'succeeded', text });
    } catch (error) {
      setResult({ ok: false, text: describeError(error) });
    } finally {
      setBusy(false);
      deliveries.reload();
    }
  };
  const titleId = `webhook-${endpoint.id}`;
  return (
    <section class="panel" aria-labelledby={titleId} data-testid="webhook-card" data-webhook-id={endpoint.id}>
      <h3 id={titleId} class="webhook-url">
        <code>{endpoint.url}</code>
        <span class={`badge ${endpoint.enabled ? 'badge-ok' : 'badge-error'}`} data-testid="webhook-enabled">
          {endpoint.enabled ? 'enabled' : 'disabled'}
        </span>
        {endpoint.format === 'slack' && <span class="badge badge-flag">Slack</span>}
      </h3>
      {endpoint.description && <p>{endpoint.description}</p>}
      <dl class="facts">
        <dt>Events</dt>
        <dd data-testid="webhook-events">{endpoint.events.join(', ')}</dd>
        {!endpoint.enabled && endpoint.disabled_reason && (
          <>
            <dt>Disabled</dt>
            <dd data-testid="webhook-disabled-reason">{endpoint.disabled_reason}</dd>
          </>
        )}
        {endpoint.consecutive_give_ups > 0 && (
          <>
            <dt>Gave up in a row</dt>
            <dd>{endpoint.consecutive_give_ups} of 20 before it is disabled</dd>
          </>
        )}
      </dl>
      {secret && <SecretOnce label="New signing secret" secret={secret} onDone={() => setSecret(null)} />}
      {editing && (
        <WebhookForm
          initial={endpoint}
          submitLabel="Save"
          onCancel={() => setEditing(false)}
          onSubmit={async (value) => {
            await updateWebhook(endpoint.id, { url: value.url, events: value.events, description: value.description });
            setEditing(false);
            onChanged();
          }}
        />
      )}
      <div class="actions">
        <button type="button" data-testid="send-test" disabled={busy} onClick={() => void sendTest()}>
          {busy ? 'Sending test…' : 'Send test'}
        </button>
        {!editing && (
          <button type="button" data-testid="webhook-edit" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        <button type="button" data-testid="webhook-toggle" onClick={() =>
            void act(async () => {
              await updateWebhook(endpoint.id, { enabled: !endpoint.enabled });
              onChanged();
            })
          }
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" data-testid="webhook-rotate" onClick={() => void act(async () => setSecret((await rotateWebhookSecret(endpoint.id)).secret))}>
          Rotate secret
        </button>
        {actionError && (
          <p class="field-error" role="alert">
            {actionError}
          </p>
        )}
        <p class={result && !result.ok ? 'field-error' : 'muted'} role="status" aria-live="polite" data-testid="test-result">
          {result?.text ?? ''}
        </p>
      </div>
      <h4>Last deliveries</h4>
      <Loaded resource={deliveries} label="Loading deliveries…">
        {(data) => <DeliveryTable deliveries={data.deliveries} />}
      </Loaded>
    </section>
  );
}

/**
 * Project settings: the webhook endpoints (add, edit, enable/disable, rotate the signing secret,
 * send a test) with their last deliveries (docs/webhooks.md), then the project's retention and its
 * deletions (docs/data-lifecycle.md), admin scope; and the exports of the window
 * (components/export-section.tsx), read scope.
 */
export function SettingsPage({ projectId }: { projectId: string }) {
  const webhooks = useResource(() => listWebhooks(projectId), [projectId]);
  const [adding, setAdding] = useState(false);
  const [newSecret, setNewSecret] = useState<string | null>(null);
  return (
    <>
      <h1>Project settings</h1>
      <h2>Webhooks</h2>
      <p class="muted">Signed HTTP calls to your own systems when issues open, reopen, resolve or are dismissed, and when a monitor becomes active.</p>
      {newSecret && <SecretOnce label="Signing secret of the new endpoint" secret={newSecret} onDone={() => setNewSecret(null)} />}
      {adding ? (
        <section class="panel">
          <h3>New endpoint</h3>
          <WebhookForm
            submitLabel="Add endpoint"
            onCancel={() => setAdding(false)}
            onSubmit={async (value) => {
              const created = await createWebhook(projectId, { url: value.url, events: value.events, ...(value.description ? { description: value.description } : {}) });
              setNewSecret(created.secret);
              setAdding(false);
              webhooks.reload();
            }}
          />
        </section>
      ) : (
        <p>
          <button type="button" data-testid="webhook-add" onClick={() => setAdding(true)}>
            Add endpoint…
          </button>
        </p>
      )}
      <Loaded resource={webhooks} label="Loading webhooks…">
        {(data) =>
          data.webhooks.length === 0 ? (
            <Empty>
              <p>
                No webhook endpoints yet. Add one above (admin key), or with <code>POST /api/projects/{projectId}/webhooks</code>.
              </p>
            </Empty>
          ) : (
            <div data-testid="webhook-list">
              {data.webhooks.map((w) => (
                <WebhookCard key={w.id} endpoint={w} onChanged={webhooks.reload} />
              ))}
            </div>
          )
        }
      </Loaded>
      <DataLifecycle projectId={projectId} />
      <ExportSection projectId={projectId} />
    </>
  );
}
