import type { WebhookEnvelope } from './webhook-payload.js';
import type { TEST_EVENT, WebhookEventType } from './webhook-types.js';

/**
 * The `slack` format (docs/webhooks.md "Slack"): a body a Slack incoming-webhook URL accepts —
 * `text` (the notification line, and the fallback for clients without blocks) plus `blocks`.
 * Slack's mrkdwn needs &, < and > escaped in user text (Slack API docs, "Escaping text").
 */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function linked(text: string, url: string | null | undefined): string {
  return url ? `<${url}|${escape(text)}>` : `*${escape(text)}*`;
}

// Typed by the event list, so a new event type cannot ship without its headline.
const HEADLINES: Record<WebhookEventType | typeof TEST_EVENT, string> = {
  'issue.created': 'New issue',
  'issue.reopened': 'Issue reopened',
  'issue.resolved': 'Issue resolved',
  'issue.dismissed': 'Issue dismissed',
  'issue.review_started': 'Issue review started',
  'monitor.activated': 'Monitor active',
  'webhook.test': 'Test event',
};

export function slackBody(envelope: WebhookEnvelope): { text: string; blocks: unknown[] } {
  const { data } = envelope;
  const headline = HEADLINES[envelope.type as keyof typeof HEADLINES] ?? envelope.type;
  const project = escape(data.project.name || data.project.id);
  let line: string;
  const facts: string[] = [];
  if (data.issue) {
    line = `${headline} in ${project}: ${linked(data.issue.title, data.issue.url)}`;
    facts.push(`Status: ${data.issue.status}`, `Occurrences: ${data.issue.occurrence_count}`);
    if (data.issue.last_seen_at) facts.push(`Last seen: ${data.issue.last_seen_at}`);
  } else if (data.monitor) {
    line = `${headline} in ${project}: ${linked(data.monitor.name, data.monitor.url)} finished learning and now watches every trace`;
    facts.push(`Kind: ${data.monitor.kind}`);
  } else {
    line = `${headline} for ${project}: ${escape(data.message ?? '')}`;
  }
  return {
    text: line,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: line } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: [...facts, `Event ${envelope.id}`].join(' · ') }] },
    ],
  };
}
