import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request } from 'express';
import { HttpError, ValidationError } from '../http/errors.js';
import { decodeJsonExport } from './otlp-decode-json.js';
import { decodeProtobufExport } from './otlp-decode-protobuf.js';
import type { OtlpEncoding } from './otlp-response.js';
import { OtlpDecodeError, type DecodedExport } from './otlp-types.js';

/**
 * Reading an OTLP/HTTP request (OTLP specification, "OTLP/HTTP Request"): the raw body with a
 * size limit, `Content-Encoding: gzip`, and the content type that picks the decoder. Langfuse-style
 * handling: every failure gets its own status and a message that says what to fix.
 */

const gunzip = promisify(zlib.gunzip);

export class PayloadTooLargeError extends HttpError {
  constructor(limit: number) {
    super(413, 'payload_too_large', `Request body exceeds the OTLP limit of ${limit} bytes (decompressed)`);
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  constructor(detail: string) {
    super(415, 'unsupported_media_type', detail);
  }
}

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

/** Reads the body, refusing early on a Content-Length over the limit and stopping once the limit is passed. */
export async function readRawBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLargeError(limit);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** Undoes Content-Encoding; the decompressed size is bounded by the same limit (a gzip bomb stops at it). */
export async function decodeContentEncoding(body: Buffer, contentEncoding: string | undefined, limit: number): Promise<Buffer> {
  const coding = (contentEncoding ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return body;
  if (coding !== 'gzip' && coding !== 'x-gzip') {
    throw new UnsupportedMediaTypeError(`Unsupported Content-Encoding "${contentEncoding}": use gzip or none`);
  }
  try {
    return await gunzip(body, { maxOutputLength: limit });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new PayloadTooLargeError(limit);
    throw new ValidationError(`Content-Encoding is gzip but the body is not valid gzip: ${(err as Error).message}`);
  }
}

export function decodeExport(body: Buffer, encoding: OtlpEncoding): DecodedExport {
  try {
    return encoding === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(body.toString('utf8'));
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw new ValidationError(err.message);
    throw err;
  }
}
