import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { listWebhookDeliveries, listWebhooks, sendWebhookTest } from '../api/endpoints.js';
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

function WebhookCard({ endpoint }: { endpoint: WebhookEndpoint }) {
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
      <div class="actions">
        <button type="button" data-testid="send-test" disabled={busy} onClick={() => void sendTest()}>
          {busy ? 'Sending test…' : 'Send test'}
        </button>
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

/** Project settings: the webhook endpoints with their last deliveries and a test button (docs/webhooks.md). */
export function SettingsPage({ projectId }: { projectId: string }) {
  const webhooks = useResource(() => listWebhooks(projectId), [projectId]);
  return (
    <>
      <h1>Project settings</h1>
      <h2>Webhooks</h2>
      <p class="muted">Signed HTTP calls to your own systems when issues open, reopen, resolve or are dismissed, and when a monitor becomes active.</p>
      <Loaded resource={webhooks} label="Loading webhooks…">
        {(data) =>
          data.webhooks.length === 0 ? (
            <Empty>
              <p>
                No webhook endpoints yet. Add one with <code>POST /api/projects/{projectId}/webhooks</code> and an admin key.
              </p>
            </Empty>
          ) : (
            <div data-testid="webhook-list">
              {data.webhooks.map((w) => (
                <WebhookCard key={w.id} endpoint={w} />
              ))}
            </div>
          )
        }
      </Loaded>
    </>
  );
}
