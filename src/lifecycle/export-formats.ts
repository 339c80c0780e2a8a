/**
 * The export formats: what each asks of the engine (ClickHouse's own writers) and how it is labelled
 * for the client, and the download's file name.
 */
import type { QueryWindow } from '../analytics/query/event-export.js';
import type { StatementSettings } from '../platform/clickhouse/sql/compile.js';
import type { PartsJoin, StreamFormat } from '../platform/clickhouse/sql/statement-stream.js';
import type { ExportFormat } from './export-schemas.js';
import { joinParquet, PARQUET_SLICE_SETTINGS } from './parquet-join.js';

export interface FormatDef {
  /** The engine's format of the first statement. */
  engine: StreamFormat;
  /**
   * The format of each later slice's statement (the window is read in slices, export-slices.ts),
   * whose answers then follow one another as one document: CSV without its header line again.
   */
  later: StreamFormat;
  /** How the slices' answers become one document where following one another is not enough. */
  join?: PartsJoin;
  /** The format's own settings besides OUTPUT_SETTINGS. */
  settings?: StatementSettings;
  contentType: string;
  extension: string;
}

export const FORMATS: Record<ExportFormat, FormatDef> = {
  ndjson: { engine: 'JSONEachRow', later: 'JSONEachRow', contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' },
  csv: { engine: 'CSVWithNames', later: 'CSV', contentType: 'text/csv; charset=utf-8', extension: 'csv' },
  // Each slice is a Parquet file of its own; a file has one footer indexing all of its row groups, so they are joined into one (parquet-join.ts).
  parquet: { engine: 'Parquet', later: 'Parquet', join: joinParquet, settings: PARQUET_SLICE_SETTINGS, contentType: 'application/vnd.apache.parquet', extension: 'parquet' },
};

/**
 * Output settings, the same on both backends whatever a connection's defaults: integers as JSON
 * numbers (their text is exact; a reader that needs more than 2^53 reads it as text), ISO 8601 UTC
 * times, an empty CSV cell for null (what spreadsheet and dataframe tools read as missing; an empty
 * text is written `""`), and Parquet row groups small enough that the engine holds little of the
 * answer at a time.
 */
export const OUTPUT_SETTINGS: StatementSettings = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_denormals: 0,
  date_time_output_format: 'iso',
  format_csv_null_representation: '',
  output_format_parquet_row_group_size: 100_000,
};

/** `lookout-generation-completed-20261101T000000Z-20261102T000000Z.csv`: what and when, safe in any file system. */
export function exportFilename(what: string, window: QueryWindow, extension: string): string {
  const compact = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  return `lookout-${what.replace(/[^a-z0-9]+/g, '-')}-${compact(window.start)}-${compact(window.endExclusive)}.${extension}`;
}
