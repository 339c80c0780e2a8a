import { UnsupportedMediaTypeError } from './otlp-body.js';
import type { OtlpEncoding } from './otlp-response.js';

/**
 * Reading an OTLP/HTTP request (OTLP specification, "OTLP/HTTP Request"): the content type that
 * picks the decoder (the body itself is read by otlp-body.ts). Langfuse-style
 * handling: every failure gets its own status and a message that says what to fix.
 */

/** The encoding named by Content-Type, or null when it is not one OTLP/HTTP defines. */
export function encodingOf(contentType: string | undefined): OtlpEncoding | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return null;
}

export function requireEncoding(contentType: string | undefined): OtlpEncoding {
  const encoding = encodingOf(contentType);
  if (!encoding) {
    throw new UnsupportedMediaTypeError(
      `Unsupported Content-Type ${contentType ? `"${contentType}"` : '(none)'}: OTLP/HTTP takes application/x-protobuf or application/json`,
    );
  }
  return encoding;
}
