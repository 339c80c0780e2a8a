import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { HttpError, ValidationError } from '../../platform/http/errors.js';
import { DECODED_BYTES_PER_BODY_BYTE, type Reservation } from '../write/ingest-budget.js';
import type { OtlpEncoding } from './otlp-response.js';

/**
 * Reads an OTLP/HTTP request body (OTLP specification, "OTLP/HTTP Request") under two bounds:
 *
 * - OTLP_MAX_BYTES on the decompressed body: a body (or what it inflates to) past it is a 413.
 *   gzip is inflated as a stream, so a bomb stops at the limit instead of inflating in full.
 * - The memory budget: every byte is charged to the request's reservation as it arrives or
 *   inflates, with the decoded spans and rows it will become (ingest-budget.ts), before it is
 *   kept; over the budget the read stops with 429.
 *
 * The request stream is read with listeners, not `for await`: leaving a `for await` early destroys
 * the stream and with it the socket, so the client saw a connection reset instead of our 413. On a
 * refusal the listener stays and discards the rest of the body; the router answers at once, and
 * Node keeps reading (and dropping) the body so the connection ends cleanly.
 */

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

export type ContentCoding = 'identity' | 'gzip';

/**
 * What a gzip body is expected to inflate to, per compressed byte, charged up front with its
 * declared length (OTLP protobuf and JSON compress 5–10×). Paying the likely size at the start makes
 * admission all-or-nothing for ordinary bodies: under overload most requests are refused before
 * they inflate anything, instead of many inflating halfway and all failing together. Inflation
 * past this estimate (a bomb) is charged chunk by chunk.
 */
const GZIP_EXPECTED_RATIO = 8;

export function contentCodingOf(contentEncoding: string | undefined): ContentCoding {
  const coding = (contentEncoding ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return 'identity';
  if (coding === 'gzip' || coding === 'x-gzip') return 'gzip';
  throw new UnsupportedMediaTypeError(`Unsupported Content-Encoding "${contentEncoding}": use gzip or none`);
}

export interface OtlpBodyOptions {
  /** OTLP_MAX_BYTES: the largest decompressed body. */
  limit: number;
  encoding: OtlpEncoding;
  reservation: Reservation;
}

/** The request was cut off before its body ended (the client went away): nobody reads the answer. */
export class BodyAbortedError extends HttpError {
  constructor() {
    super(400, 'validation_error', 'The request body ended before its declared length');
  }
}

/**
 * The decompressed body. Throws 413 over the limit, 429 over the memory budget, 415 for an unknown
 * Content-Encoding and 400 for a body that is not valid gzip. Charges `reservation` as it reads;
 * the caller releases it when the request ends, whatever the outcome.
 */
export async function readOtlpBody(req: IncomingMessage, options: OtlpBodyOptions): Promise<Buffer> {
  const { limit, reservation } = options;
  const coding = contentCodingOf(req.headers['content-encoding']);
  // Each decompressed byte is held as the body and again, several times over, as decoded spans and rows.
  const perBodyByte = 1 + DECODED_BYTES_PER_BODY_BYTE[options.encoding];
  const perWireByte = coding === 'identity' ? perBodyByte : 1;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  // A declared length is charged up front: a request the budget cannot take is refused before it is read.
  let chargedWire = 0;
  let prepaidInflated = 0;
  if (Number.isFinite(declared) && declared > 0) {
    if (coding === 'gzip') prepaidInflated = Math.min(declared * GZIP_EXPECTED_RATIO, limit);
    reservation.reserve(declared * perWireByte + prepaidInflated * perBodyByte);
    chargedWire = declared;
  }

  return new Promise<Buffer>((resolve, reject) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let wireBytes = 0;
    let settled = false;
    const gunzip = coding === 'gzip' ? zlib.createGunzip() : null;

    const cleanup = () => {
      req.removeListener('end', onEnd);
      req.removeListener('error', onAbort);
      req.removeListener('close', onClose);
    };
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      kept.length = 0;
      gunzip?.destroy();
      // The 'data' listener stays: it drops the rest of the body, so the client can finish sending.
      if (req.isPaused()) req.resume();
      reject(error);
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      cleanup();
      req.removeListener('data', onData);
      resolve(kept.length === 1 ? kept[0] : Buffer.concat(kept, keptBytes));
    };
    /** A decompressed chunk: counted against the limit, charged (gzip only: identity was charged on the wire), kept. */
    const keep = (chunk: Buffer, charge: boolean) => {
      const before = keptBytes;
      keptBytes += chunk.length;
      if (keptBytes > limit) throw new PayloadTooLargeError(limit);
      // Only what goes past the bytes already paid for (this chunk's predecessors, or the up-front estimate).
      const unpaid = keptBytes - Math.max(before, prepaidInflated);
      if (charge && unpaid > 0) reservation.reserve(unpaid * perBodyByte);
      kept.push(chunk);
    };
    function onData(chunk: Buffer) {
      if (settled) return;
      try {
        wireBytes += chunk.length;
        if (wireBytes > chargedWire) {
          reservation.reserve((wireBytes - chargedWire) * perWireByte);
          chargedWire = wireBytes;
        }
        if (!gunzip) {
          keep(chunk, false);
        } else if (wireBytes > limit) {
          // Compressed data longer than the limit inflates to more than the limit, but for a few header bytes.
          throw new PayloadTooLargeError(limit);
        } else if (!gunzip.write(chunk)) {
          req.pause();
          gunzip.once('drain', () => {
            if (!settled) req.resume();
          });
        }
      } catch (error) {
        fail(error as Error);
      }
    }
    function onEnd() {
      if (gunzip) gunzip.end();
      else finish();
    }
    function onAbort() {
      fail(new BodyAbortedError());
    }
    function onClose() {
      if (!req.readableEnded) fail(new BodyAbortedError());
    }

    if (gunzip) {
      gunzip.on('data', (chunk: Buffer) => {
        if (settled) return;
        try {
          keep(chunk, true);
        } catch (error) {
          fail(error as Error);
        }
      });
      gunzip.on('end', finish);
      gunzip.on('error', (err) => fail(new ValidationError(`Content-Encoding is gzip but the body is not valid gzip: ${err.message}`)));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
