import crypto from 'node:crypto';
import type { TraceFailure } from '../../ingest/trace-hooks.js';

/**
 * The fingerprint rule (docs/issues.md "Fingerprint"). A failure is identified by three parts:
 *
 *   error type   exception.type / error.type of the span, trimmed ('' when none)
 *   span name    the span's name with its variable parts masked (below)
 *   tool         the tool name when the failed span is a tool call, else ''
 *
 * Masking keeps one issue per kind of failure rather than per request: UUIDs become `{uuid}`,
 * hex runs of 16+ characters (trace ids, hashes) `{hex}`, and a number standing as a whole token
 * (between start/end, whitespace or one of / : = ? & # , ;) `{n}` — so `GET /users/123` masks
 * but a model name like `gpt-4o` or `claude-3.5` keeps its digits. Whitespace is collapsed. The message is deliberately left out — it usually carries request data
 * and would split one failure into many issues. The fingerprint is the hex SHA-256 of the version
 * tag and the three parts joined by the unit separator, scoped per project by the issues table.
 */
export const FINGERPRINT_VERSION = 'v1';

export function maskVariableParts(text: string): string {
  return text
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{uuid}')
    .replace(/\b[0-9a-f]{16,}\b/gi, '{hex}')
    .replace(/(^|[\s/:=?&#,;])\d+(?=$|[\s/:=?&#,;])/g, '$1{n}');
}

export interface FingerprintParts {
  error_type: string;
  span_name: string;
  tool_name: string;
}

export function fingerprintParts(failure: Pick<TraceFailure, 'error_type' | 'span_name' | 'tool_name'>): FingerprintParts {
  return {
    error_type: failure.error_type.trim(),
    span_name: maskVariableParts(failure.span_name),
    tool_name: failure.tool_name.trim(),
  };
}

export function fingerprintOf(failure: Pick<TraceFailure, 'error_type' | 'span_name' | 'tool_name'>): string {
  const p = fingerprintParts(failure);
  return crypto.createHash('sha256').update([FINGERPRINT_VERSION, p.error_type, p.span_name, p.tool_name].join('\u001f')).digest('hex');
}

/** A readable title for an issue opened by extraction, e.g. "TimeoutError in tool search_docs". */
export function issueTitleFor(failure: Pick<TraceFailure, 'error_type' | 'span_name' | 'tool_name'>): string {
  const p = fingerprintParts(failure);
  const what = p.error_type || 'Error';
  const where = p.tool_name ? `tool ${p.tool_name}` : p.span_name || 'unnamed span';
  return `${what} in ${where}`.slice(0, 500);
}
