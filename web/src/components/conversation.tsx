import { useState } from 'preact/hooks';

/**
 * An agent's recorded input or output shown as a conversation: one block per message with its
 * role, its text and its tool calls, and the recorded JSON one click away. Reads the message shapes
 * the supported conventions record (docs/ingestion.md): OpenTelemetry GenAI `parts`
 * (`text`, `tool_call`, `tool_call_response`), OpenAI-style `content` + `tool_calls`, and the
 * Vercel AI SDK's `content` parts (`text`, `tool-call`, `tool-result`) or `{prompt}`. Anything
 * else is shown as recorded. Only layout: no text is changed or summarized.
 */
export interface ToolCallView {
  name: string;
  arguments: string;
}

export interface MessageView {
  role: string;
  text: string[];
  toolCalls: ToolCallView[];
  /** Tool results carried by the message (role tool, or a tool_call_response part). */
  toolResults: string[];
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));
/** A short field (a type, role or name): its text, '' when absent. */
const field = (value: unknown): string => (value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

function readPart(part: unknown, into: MessageView): void {
  if (typeof part === 'string') {
    into.text.push(part);
    return;
  }
  if (!part || typeof part !== 'object') return;
  const p = part as Record<string, unknown>;
  const type = field(p.type);
  if (type === 'text' || (type === '' && (typeof p.text === 'string' || typeof p.content === 'string'))) {
    into.text.push(field(p.content ?? p.text));
  } else if (type === 'tool_call' || type === 'tool-call') {
    into.toolCalls.push({ name: field(p.name ?? p.toolName), arguments: asText(p.arguments ?? p.input ?? p.args ?? {}) });
  } else if (type === 'tool_call_response' || type === 'tool-result') {
    into.toolResults.push(asText(p.response ?? p.result ?? p.output ?? ''));
  } else {
    into.text.push(asText(part));
  }
}

function readMessage(raw: Record<string, unknown>): MessageView {
  const message: MessageView = { role: field(raw.role ?? 'message'), text: [], toolCalls: [], toolResults: [] };
  const body = raw.parts ?? raw.content;
  if (typeof body === 'string') {
    if (message.role === 'tool') message.toolResults.push(body);
    else message.text.push(body);
  } else if (Array.isArray(body)) {
    for (const part of body) readPart(part, message);
  } else if (body !== undefined && body !== null) {
    message.text.push(asText(body));
  }
  if (Array.isArray(raw.tool_calls)) {
    for (const call of raw.tool_calls as Record<string, unknown>[]) {
      const fn = (call?.function ?? call) as Record<string, unknown>;
      message.toolCalls.push({ name: field(fn?.name), arguments: asText(fn?.arguments ?? {}) });
    }
  }
  return message;
}

/** The messages of a recorded value, or null when it is not a conversation. */
export function toConversation(value: unknown, defaultRole: string): MessageView[] | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string') return [{ role: defaultRole, text: [value], toolCalls: [], toolResults: [] }];
  if (Array.isArray(value) && value.length > 0 && value.every((m) => m && typeof m === 'object' && 'role' in m)) {
    return value.map((m) => readMessage(m as Record<string, unknown>));
  }
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.messages)) return toConversation(v.messages, defaultRole);
    if (typeof v.prompt === 'string') return [{ role: defaultRole, text: [v.prompt], toolCalls: [], toolResults: [] }];
  }
  return null;
}

export function Conversation({ value, defaultRole, testId }: { value: unknown; defaultRole: string; testId: string }) {
  const messages = toConversation(value, defaultRole);
  const [raw, setRaw] = useState(messages === null);
  const json = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <div data-testid={testId}>
      {messages !== null && (
        <button type="button" class="link-button raw-toggle" aria-pressed={raw} data-testid={`${testId}-raw-toggle`} onClick={() => setRaw(!raw)}>
          {raw ? 'Show as conversation' : 'Show raw JSON'}
        </button>
      )}
      {raw || messages === null ? (
        <pre tabIndex={0} data-testid={`${testId}-raw`}>
          {json}
        </pre>
      ) : (
        <ol class="conversation" data-testid={`${testId}-messages`}>
          {messages.map((m, i) => (
            <li key={i} class={`message message-${m.role}`} data-role={m.role}>
              <div class="message-role">{m.role}</div>
              {m.text.map((t, j) => (
                <p key={j} class="message-text">
                  {t}
                </p>
              ))}
              {m.toolCalls.map((call, j) => (
                <div key={`c${j}`} class="tool-call-part" data-testid="message-tool-call">
                  Tool call <code>{call.name}</code>
                  <pre>{call.arguments}</pre>
                </div>
              ))}
              {m.toolResults.map((result, j) => (
                <div key={`r${j}`} class="tool-call-part">
                  Tool result
                  <pre>{result}</pre>
                </div>
              ))}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
