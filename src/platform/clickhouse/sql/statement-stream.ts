/**
 * A streamed read: one SELECT whose answer leaves the engine in one of ClickHouse's own output
 * formats, chunk by chunk, as fast as the reader takes it (exports: src/lifecycle/export-*.ts).
 *
 *  - On a ClickHouse server the chunks are the HTTP answer of @clickhouse/client's `exec`: the
 *    socket is read only when the reader asks, so TCP flow control holds the server back.
 *  - On the embedded engine @clickhouse/client's chdb connection materializes the whole answer
 *    before handing it over (chdb/connection says so: "eager buffering"), which for ten million
 *    rows is the whole export in memory. chdb's own streaming query (`queryStream`, one chunk per
 *    fetch on a libuv thread, the next fetch only when the previous chunk was taken) is the flat
 *    path, so the embedded engine's connections expose it as a RawStream, as they expose raw inserts.
 *
 * The statement runner (statement-runner.ts `stream`) holds the lane's slot and connection until
 * the stream ends or is destroyed; this file only produces chunks and names errors.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { QueryTimeoutError, ValidationError } from '../../http/errors.js';
import { clickhouseUnavailable } from '../../store-errors.js';
import type { CompiledStatement } from './compile.js';
import type { Fragment } from './fragment.js';
import { isEngineError } from './engine-errors.js';

/** The output formats a stream may ask for (ClickHouse format names). */
export type StreamFormat = 'JSONEachRow' | 'CSVWithNames' | 'CSV' | 'Parquet';

/** One statement of a streamed read and the format of its answer (a read in slices has several). */
export interface StreamPart {
  statement: Fragment;
  format: StreamFormat;
}

/**
 * How the answers of a streamed read's statements become one stream, given each statement's chunks
 * in turn (a part is started only once the join asks for it): a Parquet export joins its slices'
 * files into one, the trace export turns each slice's rows into OTLP lines. Absent: one after another.
 */
export type PartsJoin = (parts: AsyncIterable<AsyncIterable<Uint8Array>>) => AsyncIterable<Uint8Array>;

/** The default join: every part's chunks as they come, one part after another. */
export async function* concatParts(parts: AsyncIterable<AsyncIterable<Uint8Array>>): AsyncGenerator<Uint8Array> {
  for await (const part of parts) yield* part;
}

/**
 * The embedded engine's streaming query on one connection: the statement's chunks in `format`,
 * each fetched when the previous one was taken; returning the iterator early cancels the query.
 * Errors arrive as @clickhouse/client's ClickHouseError (code and type), as the driver's do.
 */
export type RawStream = (sql: string, format: StreamFormat) => AsyncIterable<Uint8Array>;

/** The chunks of a server's HTTP answer; destroying the answer ends the request. */
export async function* serverChunks(client: ClickHouseClient, compiled: CompiledStatement, format: StreamFormat, extra: object): AsyncGenerator<Uint8Array> {
  const params = Object.keys(compiled.params).length > 0 ? { query_params: compiled.params } : {};
  const result = await client.exec({ query: `${compiled.sql}\nFORMAT ${format}`, ...params, ...extra });
  try {
    for await (const chunk of result.stream as AsyncIterable<Buffer>) yield chunk;
  } finally {
    result.stream.destroy();
  }
}

/**
 * What a failed streamed read answers: its time limit (504), memory (400, like an analytics query
 * that needs too much), a store that is not there (503); anything else as it is.
 */
export function streamError(error: unknown, timeoutSeconds: number): unknown {
  if (isEngineError(error, 'TIMEOUT_EXCEEDED')) return new QueryTimeoutError(timeoutSeconds);
  if (isEngineError(error, 'MEMORY_LIMIT_EXCEEDED')) return new ValidationError('The export needs more memory than a query may use; narrow the window');
  return clickhouseUnavailable(error);
}
