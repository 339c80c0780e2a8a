import type { AttributeValue, Attributes } from './otlp-types.js';

/**
 * GenAI content sent as OpenTelemetry log events, turned into the span attributes the same content
 * has when an instrumentation records it on the span (the newest GenAI conventions):
 *
 * - `gen_ai.client.inference.operation.details`: its `gen_ai.input.messages`,
 *   `gen_ai.output.messages` and `gen_ai.system_instructions` attributes, as they are (the span
 *   form is the same list as JSON text);
 * - the older per-message events `gen_ai.system.message`, `gen_ai.user.message`,
 *   `gen_ai.assistant.message`, `gen_ai.tool.message` (in the order they were emitted) become
 *   `gen_ai.input.messages`, and `gen_ai.choice` events (by `index`) `gen_ai.output.messages`, in
 *   the parts form the official OpenAI instrumentation writes on the span in its newest mode:
 *   `{role, parts: [{type: "text", content} | {type: "tool_call", id, name, arguments} |
 *   {type: "tool_call_response", id, response}]}`, output messages with `finish_reason`.
 *
 * So a trace's agent input and output, its conversation and the context bundle come out the same
 * whichever way the instrumentation sent its content. Events whose content capture was off (no
 * message text, no tool arguments) give no attribute, as such a span carries none.
 */

export const OPERATION_DETAILS_EVENT = 'gen_ai.client.inference.operation.details';
const MESSAGE_EVENTS: Readonly<Record<string, string>> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};
export const CHOICE_EVENT = 'gen_ai.choice';
export const CONTENT_ATTRIBUTES = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions'] as const;

/** A record's event name: the `event_name` field, else the `event.name` attribute. */
export function logEventName(eventName: string, attributes: Attributes): string {
  if (eventName !== '') return eventName;
  const attr = attributes['event.name'];
  return typeof attr === 'string' ? attr : '';
}

export function isGenAiContentEvent(name: string): boolean {
  return name === OPERATION_DETAILS_EVENT || name === CHOICE_EVENT || Object.hasOwn(MESSAGE_EVENTS, name);
}

/** One GenAI record, in emission order. */
export interface GenAiRecord {
  name: string;
  body: AttributeValue;
  attributes: Attributes;
}

type Part = Record<string, AttributeValue>;
type Obj = { [key: string]: AttributeValue };

const isObj = (v: AttributeValue | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: AttributeValue | undefined) => v !== undefined && v !== null && v !== '';

/** Tool-call arguments as the span form has them: parsed when they are JSON text. */
function parsedArguments(raw: AttributeValue | undefined): AttributeValue {
  if (typeof raw !== 'string') return raw ?? null;
  try {
    return JSON.parse(raw) as AttributeValue;
  } catch {
    return raw;
  }
}

interface Parts {
  parts: Part[];
  /** Whether the body carried captured content (text or tool arguments), not only ids and names. */
  content: boolean;
}

function toolCallParts(calls: AttributeValue | undefined): Parts {
  const out: Parts = { parts: [], content: false };
  if (!Array.isArray(calls)) return out;
  for (const call of calls) {
    if (!isObj(call)) continue;
    const fn = isObj(call.function) ? call.function : {};
    if (nonEmpty(fn.arguments)) out.content = true;
    out.parts.push({ type: 'tool_call', id: call.id ?? null, name: typeof fn.name === 'string' ? fn.name : '', arguments: parsedArguments(fn.arguments) });
  }
  return out;
}

function textParts(content: AttributeValue | undefined): Parts {
  if (typeof content === 'string') return { parts: content === '' ? [] : [{ type: 'text', content }], content: content !== '' };
  if (!Array.isArray(content)) return { parts: [], content: false };
  // A list of content parts (multimodal form): its text pieces.
  const parts: Part[] = [];
  for (const p of content) {
    const text = typeof p === 'string' ? p : isObj(p) && typeof p.text === 'string' ? p.text : isObj(p) && typeof p.content === 'string' ? p.content : null;
    if (text !== null && text !== '') parts.push({ type: 'text', content: text });
  }
  return { parts, content: parts.length > 0 };
}

/** The parts of one message body ({content, tool_calls, id}) by its role. */
function messageParts(role: string, body: Obj): Parts {
  if (role === 'tool') {
    return { parts: [{ type: 'tool_call_response', id: body.id ?? body.tool_call_id ?? null, response: body.content ?? null }], content: nonEmpty(body.content) };
  }
  const calls = role === 'assistant' ? toolCallParts(body.tool_calls) : { parts: [], content: false };
  const text = textParts(body.content);
  return { parts: [...calls.parts, ...text.parts], content: calls.content || text.content };
}

/** The attribute's span form: JSON text (an event carries the list as a structured value). */
function spanForm(value: AttributeValue): AttributeValue {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The content attributes a span gets from its GenAI records (in emission order). The newest
 * conventions' operation-details record wins over per-message events for the same attribute.
 */
export function genAiContentAttributes(records: readonly GenAiRecord[]): Attributes {
  const input: Obj[] = [];
  const output: { index: number; order: number; message: Obj }[] = [];
  let inputContent = false;
  let outputContent = false;
  const details: Attributes = {};
  for (const r of records) {
    if (r.name === OPERATION_DETAILS_EVENT) {
      for (const key of CONTENT_ATTRIBUTES) if (nonEmpty(r.attributes[key])) details[key] = spanForm(r.attributes[key]);
      continue;
    }
    const body: Obj = isObj(r.body) ? r.body : typeof r.body === 'string' ? { content: r.body } : {};
    if (r.name === CHOICE_EVENT) {
      const message: Obj = isObj(body.message) ? body.message : {};
      const role = typeof message.role === 'string' && message.role !== '' ? message.role : 'assistant';
      const parts = messageParts('assistant', message);
      outputContent ||= parts.content;
      const index = typeof body.index === 'number' ? body.index : output.length;
      output.push({
        index,
        order: output.length,
        message: { role, parts: parts.parts, finish_reason: typeof body.finish_reason === 'string' ? body.finish_reason : 'error' },
      });
      continue;
    }
    const role = typeof body.role === 'string' && body.role !== '' ? body.role : MESSAGE_EVENTS[r.name];
    if (role === undefined) continue;
    const parts = messageParts(role, body);
    inputContent ||= parts.content;
    input.push({ role, parts: parts.parts });
  }
  const out: Attributes = {};
  if (inputContent) out['gen_ai.input.messages'] = JSON.stringify(input);
  if (outputContent) {
    output.sort((a, b) => a.index - b.index || a.order - b.order);
    out['gen_ai.output.messages'] = JSON.stringify(output.map((o) => o.message));
  }
  return { ...out, ...details };
}
