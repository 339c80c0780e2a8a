import { USER_MESSAGE_ARGUMENT_KEYS } from './attribute-mapping.js';
import { truncate } from './agent-io.js';

/**
 * The message a user-message tool call showed to the end user (see USER_MESSAGE_TOOLS in
 * attribute-mapping.ts), from the call's arguments. `omitted` counts further messages in the
 * same call (`messages: [...]`) that are not shown.
 */

export const USER_FACING_MESSAGE_MAX_CHARS = 2000;

export interface UserFacingMessage {
  message: string;
  truncated: boolean;
  omitted: number;
}

function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of USER_MESSAGE_ARGUMENT_KEYS) {
      const v = (value as Record<string, unknown>)[key];
      if (typeof v === 'string') return v;
    }
  }
  return null;
}

export function extractUserFacingMessage(rawArguments: string | null): UserFacingMessage {
  if (rawArguments === null || rawArguments.trim() === '') return { message: '', truncated: false, omitted: 0 };
  let args: unknown = rawArguments;
  try {
    args = JSON.parse(rawArguments);
  } catch {
    // Not JSON: the arguments are the message itself.
  }
  let message: string | null = null;
  let omitted = 0;
  if (args && typeof args === 'object' && !Array.isArray(args) && Array.isArray((args as Record<string, unknown>).messages)) {
    const list = ((args as Record<string, unknown>).messages as unknown[]).map(textOf).filter((t): t is string => t !== null);
    message = list[0] ?? null;
    omitted = Math.max(0, list.length - 1);
  }
  if (message === null) message = textOf(args);
  if (message === null) return { message: '', truncated: false, omitted };
  const cut = truncate(message, USER_FACING_MESSAGE_MAX_CHARS);
  return { message: cut.text, truncated: cut.truncated, omitted };
}
