import { gzipSync } from 'node:zlib';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

/** Helpers for tests that talk OTLP/HTTP to a running service. */

export interface OtlpAnswer {
  status: number;
  contentType: string;
  body: Buffer;
  headers: Headers;
}

export async function postOtlp(
  url: string,
  key: string | null,
  body: Uint8Array | string,
  options: { contentType?: string; gzip?: boolean; headers?: Record<string, string>; path?: string } = {},
): Promise<OtlpAnswer> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/x-protobuf', ...(options.headers ?? {}) };
  if (key) headers.authorization = `Bearer ${key}`;
  let payload: Uint8Array = typeof body === 'string' ? Buffer.from(body) : body;
  if (options.gzip) {
    payload = gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  const res = await fetch(`${url}${options.path ?? '/v1/traces'}`, { method: 'POST', headers, body: new Uint8Array(payload) });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

export const protobufBody = (spans: ReadableSpan[]) => ProtobufTraceSerializer.serializeRequest(spans)!;
export const jsonBody = (spans: ReadableSpan[]) => new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));

/**
 * Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. `what` names the
 * wait in the failure; as a function it is asked at the failure (to say what was seen last).
 */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, what: string | (() => string) = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
