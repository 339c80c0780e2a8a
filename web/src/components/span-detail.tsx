import type { Span, SpanEvent } from '../api/types.js';
import { formatCount, formatDateTime, formatMs, formatNumber } from '../format.js';
import { Conversation } from './conversation.js';
import { isErrorSpan } from './waterfall.js';

/**
 * One span's detail beside the span tree: what a person debugging an agent reads first (the
 * prompt and completion of a model call, the arguments and result of a tool call, an exception
 * with its stack trace written out line by line), then every attribute and event as recorded.
 * Layout only: values are the API's, JSON text is indented, nothing is summarized.
 */

/** Attribute names that carry a model call's prompt and completion, or a tool's call and result, in the conventions understood at ingest. */
const PROMPT = ['gen_ai.input.messages', 'gen_ai.prompt', 'llm.input_messages', 'ai.prompt.messages', 'ai.prompt'];
const COMPLETION = ['gen_ai.output.messages', 'gen_ai.completion', 'llm.output_messages', 'ai.response.text', 'ai.response.object'];
const TOOL_ARGUMENTS = ['gen_ai.tool.call.arguments', 'ai.toolCall.args', 'tool.arguments', 'input.value'];
const TOOL_RESULT = ['gen_ai.tool.call.result', 'ai.toolCall.result', 'tool.result', 'output.value'];

/** A recorded string that holds JSON, parsed; anything else as it is. */
export function parseJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!(text.startsWith('{') || text.startsWith('['))) return value;
  try {
    return JSON.parse(text);
  } catch {
    return value;
  }
}

/** Text for a <pre>: strings as they are (their newlines shown as line breaks), JSON indented. */
export function displayText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const parsed = parseJsonText(value);
  return typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2);
}

function first(attributes: Record<string, unknown>, names: string[]): { name: string; value: unknown } | null {
  for (const name of names) {
    const value = attributes[name];
    if (value !== undefined && value !== null && value !== '') return { name, value };
  }
  return null;
}

/** An OpenTelemetry exception event: type and message in a heading, the stack trace as lines. */
function ExceptionView({ event }: { event: SpanEvent }) {
  const a = event.attributes ?? {};
  const type = typeof a['exception.type'] === 'string' ? a['exception.type'] : 'Exception';
  const message = displayText(a['exception.message']);
  const stack = displayText(a['exception.stacktrace']);
  return (
    <div class="exception" data-testid="span-exception">
      <p class="exception-title">
        <strong>{type}</strong>
        {message && `: ${message}`}
      </p>
      {event.timestamp && <p class="muted">{formatDateTime(event.timestamp)}</p>}
      {stack && (
        <pre class="stack-trace" data-testid="stack-trace" tabIndex={0}>
          {stack}
        </pre>
      )}
    </div>
  );
}

function Block({ title, value, testId, role }: { title: string; value: unknown; testId: string; role?: string }) {
  const parsed = parseJsonText(value);
  return (
    <section class="detail-block">
      <h3>{title}</h3>
      {role ? <Conversation value={parsed} defaultRole={role} testId={testId} /> : <pre data-testid={testId} tabIndex={0}>{displayText(value)}</pre>}
    </section>
  );
}

export function SpanDetailView({ span }: { span: Span }) {
  const attributes = span.attributes ?? {};
  const events: SpanEvent[] = Array.isArray(span.events) ? (span.events) : [];
  const exceptions = events.filter((e) => e.name === 'exception');
  const otherEvents = events.filter((e) => e.name !== 'exception');
  const prompt = first(attributes, PROMPT);
  const completion = first(attributes, COMPLETION);
  const toolArguments = first(attributes, TOOL_ARGUMENTS);
  const toolResult = first(attributes, TOOL_RESULT);
  const entries = Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div data-testid="span-detail" data-span-id={span.otel_span_id}>
      <h2 class="detail-title">
        {span.name} {isErrorSpan(span) && <span class="badge badge-error">error</span>}
      </h2>
      <dl class="facts compact-facts">
        <dt>Duration</dt>
        <dd>{formatMs(span.duration_ms)}</dd>
        {span.model_name && (
          <>
            <dt>Model</dt>
            <dd>
              <code>{span.model_name}</code>
            </dd>
          </>
        )}
        {(span.input_tokens > 0 || span.output_tokens > 0) && (
          <>
            <dt>Tokens</dt>
            <dd>
              {formatCount(span.input_tokens)} in / {formatCount(span.output_tokens)} out
              {span.tps ? ` · ${formatNumber(span.tps)} tokens/s` : ''}
            </dd>
          </>
        )}
        <dt>Status</dt>
        <dd>
          {span.status_code || '—'}
          {span.status_description ? `: ${span.status_description}` : ''}
        </dd>
        <dt>Span id</dt>
        <dd>
          <code>{span.otel_span_id}</code> · kind {String(span.kind)}
        </dd>
      </dl>
      {exceptions.map((event, i) => (
        <ExceptionView key={`x${i}`} event={event} />
      ))}
      {prompt && <Block title="Prompt" value={prompt.value} role="user" testId="span-prompt" />}
      {completion && <Block title="Completion" value={completion.value} role="assistant" testId="span-completion" />}
      {toolArguments && <Block title="Tool arguments" value={toolArguments.value} testId="span-tool-arguments" />}
      {toolResult && <Block title="Tool result" value={toolResult.value} testId="span-tool-result" />}
      <section class="detail-block">
        <h3>Attributes ({entries.length})</h3>
        {entries.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <table class="data-table compact kv" data-testid="span-attributes">
            <tbody>
              {entries.map(([name, value]) => (
                <tr key={name}>
                  <th scope="row">
                    <code>{name}</code>
                  </th>
                  <td>
                    <pre>{displayText(value)}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {otherEvents.length > 0 && (
        <section class="detail-block">
          <h3>Events ({otherEvents.length})</h3>
          <ol class="events">
            {otherEvents.map((event, i) => (
              <li key={i}>
                <strong>{event.name || '(unnamed)'}</strong> <span class="muted">{event.timestamp ? formatDateTime(event.timestamp) : ''}</span>
                {event.attributes && Object.keys(event.attributes).length > 0 && <pre>{displayText(event.attributes)}</pre>}
              </li>
            ))}
          </ol>
        </section>
      )}
    </div>
  );
}
