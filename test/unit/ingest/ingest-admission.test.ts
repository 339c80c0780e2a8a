import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DECODED_BYTES_PER_BODY_BYTE, IngestBudget } from '../../../src/ingest/write/ingest-budget.js';
import { readOtlpBody } from '../../../src/ingest/otlp/otlp-body.js';

/**
 * Memory admission: a request is charged for its body, what it inflates to and
 * what that decodes into, as it reads — so a gzip bomb is refused before it has inflated in full —
 * and every reservation is given back whatever happens.
 */

const MiB = 1024 * 1024;
const PER_JSON_BYTE = 1 + DECODED_BYTES_PER_BODY_BYTE.json;

/** A request stream with headers, fed in chunks as a socket would. */
function request(body: Buffer, headers: Record<string, string>, chunk = 64 * 1024): IncomingMessage {
  const stream = new PassThrough() as unknown as IncomingMessage & PassThrough;
  stream.headers = headers;
  let offset = 0;
  const feed = () => {
    while (offset < body.length) {
      const ok = stream.write(body.subarray(offset, offset + chunk));
      offset += chunk;
      if (!ok) return void stream.once('drain', feed);
    }
    stream.end();
  };
  setImmediate(feed);
  return stream;
}

describe('ingest budget', () => {
  it('charges, refuses over the limit with 429 + Retry-After, and lets a request alone in flight grow past it', () => {
    const budget = new IngestBudget(1000);
    const a = budget.open();
    a.reserve(600);
    a.reserve(900); // alone: may exceed the budget
    expect(budget.inflightBytes).toBe(1500);
    const b = budget.open();
    expect(() => b.reserve(1)).toThrow(expect.objectContaining({ status: 429, code: 'rate_limited', headers: { 'Retry-After': '1' } }));
    a.release();
    a.release(); // idempotent
    expect(budget.inflightBytes).toBe(0);
    b.reserve(700);
    const c = budget.open();
    expect(() => c.reserve(301)).toThrow(expect.objectContaining({ status: 429 }));
    c.reserve(300);
    expect(budget.inflightBytes).toBe(1000);
    b.release();
    c.release();
    expect(budget.inflightBytes).toBe(0);
  });
});

describe('reading an OTLP body under the limit and the budget', () => {
  it('charges an identity body for itself and its decoded form, up front from Content-Length', async () => {
    const budget = new IngestBudget(100 * MiB);
    const reservation = budget.open();
    const body = Buffer.from(JSON.stringify({ resourceSpans: [] }));
    const read = await readOtlpBody(request(body, { 'content-length': String(body.length) }), { limit: MiB, encoding: 'json', reservation });
    expect(read.equals(body)).toBe(true);
    expect(reservation.bytes).toBe(body.length * PER_JSON_BYTE);
    reservation.release();
    expect(budget.inflightBytes).toBe(0);
  });

  it('charges a gzip body for what it inflates to, chunk by chunk', async () => {
    const budget = new IngestBudget(100 * MiB);
    const reservation = budget.open();
    const body = Buffer.from(JSON.stringify({ resourceSpans: [], pad: ' '.repeat(2 * MiB) }));
    const compressed = gzipSync(body);
    const read = await readOtlpBody(request(compressed, { 'content-encoding': 'gzip' }), { limit: 4 * MiB, encoding: 'json', reservation });
    expect(read.equals(body)).toBe(true);
    expect(reservation.bytes).toBe(compressed.length + body.length * PER_JSON_BYTE);
  });

  it('charges a gzip body with a declared length for its likely inflated size up front, and for any excess as it inflates', async () => {
    const budget = new IngestBudget(1024 * MiB);
    const random = Buffer.from(Array.from({ length: 256 * 1024 }, (_, i) => (i * 7919) % 251));
    const compressible = Buffer.alloc(4 * MiB, 0x20);
    for (const body of [random, compressible]) {
      const compressed = gzipSync(body);
      const reservation = budget.open();
      const read = readOtlpBody(request(compressed, { 'content-encoding': 'gzip', 'content-length': String(compressed.length) }), { limit: 8 * MiB, encoding: 'json', reservation });
      // Before a byte is read: the compressed body and 8× it, inflated and decoded.
      expect(reservation.bytes).toBe(compressed.length + compressed.length * 8 * PER_JSON_BYTE);
      expect((await read).length).toBe(body.length);
      expect(reservation.bytes).toBe(compressed.length + Math.max(body.length, compressed.length * 8) * PER_JSON_BYTE);
      reservation.release();
    }
    expect(budget.inflightBytes).toBe(0);
  });

  it('stops a gzip bomb at the budget, long before it has inflated in full, and gives the bytes back', async () => {
    const budget = new IngestBudget(8 * MiB);
    const other = budget.open();
    other.reserve(1); // another request in flight: this one may not grow past the budget
    const reservation = budget.open();
    const bomb = gzipSync(Buffer.alloc(20 * MiB, 0x20));
    expect(bomb.length).toBeLessThan(64 * 1024);
    let inflatedAtRefusal = 0;
    const error = await readOtlpBody(request(bomb, { 'content-encoding': 'gzip' }), { limit: 32 * MiB, encoding: 'json', reservation }).catch((e) => {
      inflatedAtRefusal = (reservation.bytes - bomb.length) / PER_JSON_BYTE;
      return e;
    });
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    // Refused with at most the budget's worth inflated (8 MiB / 7 per byte), not 20 MiB.
    expect(inflatedAtRefusal).toBeLessThanOrEqual((8 * MiB) / PER_JSON_BYTE);
    reservation.release();
    other.release();
    expect(budget.inflightBytes).toBe(0);
  });

  it('answers 413 when the body or what it inflates to passes OTLP_MAX_BYTES', async () => {
    const budget = new IngestBudget(1024 * MiB);
    const tooBig = Buffer.alloc(2 * MiB, 0x20);
    for (const [body, headers] of [
      [tooBig, { 'content-length': String(tooBig.length) }],
      [tooBig, {}],
      [gzipSync(tooBig), { 'content-encoding': 'gzip' }],
    ] as const) {
      const reservation = budget.open();
      await expect(readOtlpBody(request(body, headers), { limit: MiB, encoding: 'protobuf', reservation })).rejects.toMatchObject({ status: 413, code: 'payload_too_large' });
      reservation.release();
    }
    expect(budget.inflightBytes).toBe(0);
  });

  it('answers 400 for a body that is not gzip and 415 for an unknown Content-Encoding', async () => {
    const budget = new IngestBudget(MiB);
    await expect(readOtlpBody(request(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }), { limit: MiB, encoding: 'json', reservation: budget.open() })).rejects.toMatchObject({
      status: 400,
      detail: expect.stringContaining('not valid gzip'),
    });
    await expect(readOtlpBody(request(Buffer.from('{}'), { 'content-encoding': 'br' }), { limit: MiB, encoding: 'json', reservation: budget.open() })).rejects.toMatchObject({
      status: 415,
    });
  });
});
