/**
 * Reading an agent's input and output as the conventions record them, for the trace's
 * `agent_input_display`, `interaction.input_kind` and the API's `agent_input`/`agent_output`.
 *
 * input_kind values:
 * - `none`:     no input recorded;
 * - `text`:     a plain prompt (a string, or the AI SDK's `{prompt: "..."}`);
 * - `messages`: a chat message list (gen_ai.input.messages, OpenInference/AI SDK messages);
 * - `json`:     any other structured value.
 */

export type InputKind = 'none' | 'text' | 'messages' | 'json';

export const DISPLAY_MAX_CHARS = 500;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  if (t === '' || !'{["'.includes(t[0])) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
}

/** A recorded value as the API returns it: parsed JSON when the text is JSON, else the text. */
export function parseRecordedValue(text: string | null): unknown {
  if (text === null) return null;
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

type Message = { role?: unknown; content?: unknown; parts?: unknown; text?: unknown };

function isMessageList(value: unknown): value is Message[] {
  return Array.isArray(value) && value.length > 0 && value.every((m) => m !== null && typeof m === 'object' && 'role' in m);
}

/** The text of one message: `content` as a string, or the text parts of `content`/`parts`. */
function messageText(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (typeof m.text === 'string') return m.text;
  const parts = Array.isArray(m.parts) ? m.parts : Array.isArray(m.content) ? m.content : [];
  return parts
    .map((p: unknown) => {
      if (typeof p === 'string') return p;
      if (p && typeof p === 'object') {
        const part = p as Record<string, unknown>;
        if (typeof part.text === 'string') return part.text;
        if (typeof part.content === 'string' && (part.type === undefined || part.type === 'text')) return part.content;
      }
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

/** The last user message of a list, else its last message. */
function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messageText(messages[i]);
  return messageText(messages[messages.length - 1]);
}

export function truncate(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  return { text: `${text.slice(0, max - 1)}…`, truncated: true };
}

export interface InputReading {
  kind: InputKind;
  display: string;
}

export function readAgentInput(raw: string | null): InputReading {
  if (raw === null || raw === '') return { kind: 'none', display: '' };
  const parsed = parseJson(raw);
  let kind: InputKind;
  let text: string;
  if (!parsed.ok) {
    kind = 'text';
    text = raw;
  } else if (typeof parsed.value === 'string') {
    kind = 'text';
    text = parsed.value;
  } else if (isMessageList(parsed.value)) {
    kind = 'messages';
    text = lastUserText(parsed.value);
  } else if (parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value)) {
    // The AI SDK's ai.prompt: {system?, prompt} or {system?, messages}.
    const o = parsed.value as Record<string, unknown>;
    if (typeof o.prompt === 'string') {
      kind = 'text';
      text = o.prompt;
    } else if (isMessageList(o.messages)) {
      kind = 'messages';
      text = lastUserText(o.messages);
    } else if (isMessageList(o.prompt)) {
      kind = 'messages';
      text = lastUserText(o.prompt);
    } else {
      kind = 'json';
      text = JSON.stringify(parsed.value);
    }
  } else {
    kind = 'json';
    text = JSON.stringify(parsed.value);
  }
  return { kind, display: truncate(text.trim(), DISPLAY_MAX_CHARS).text };
}
