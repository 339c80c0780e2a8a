import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Fragment } from './fragment.js';

/**
 * What the engine spent per statement kind, for the ingest benchmark (the `statsFiles.clickhouse` harness option): the
 * embedded engine keeps no system.query_log (clickhouse-local creates no system log tables), so the
 * statement runner counts each kind's statements, wall time and rows/bytes itself, and on close the
 * store adds the engine's own cumulative counters (system.events: rows read and written, marks,
 * merges, query time by query type, CPU of all its threads).
 */

export interface KindStats {
  statements: number;
  /** Wall milliseconds from handing the statement to the engine until its answer. */
  ms: number;
  /** Bytes of insert bodies or of read answers. */
  bytes: number;
}

/** The engine counters worth reading per span (system.events names). */
const ENGINE_EVENTS = [
  'Query', 'SelectQuery', 'InsertQuery', 'QueryTimeMicroseconds', 'SelectQueryTimeMicroseconds', 'InsertQueryTimeMicroseconds',
  'SelectedParts', 'SelectedRanges', 'SelectedMarks', 'SelectedRows', 'SelectedBytes', 'InsertedRows', 'InsertedBytes',
  'MergeTreeDataWriterRows', 'MergeTreeDataWriterBlocks', 'MergeTreeDataWriterUncompressedBytes', 'MergeTreeDataWriterCompressedBytes',
  'Merge', 'MergedRows', 'MergedColumns', 'MergedUncompressedBytes', 'MergeTotalMilliseconds', 'MergeExecuteMilliseconds',
  'MergeHorizontalStageTotalMilliseconds', 'MergeVerticalStageTotalMilliseconds', 'MergeSourceParts',
  'AsyncInsertQuery', 'AsyncInsertRows', 'AsyncInsertBytes', 'FailedAsyncInsertQuery',
  'UserTimeMicroseconds', 'SystemTimeMicroseconds', 'OSCPUVirtualTimeMicroseconds', 'RealTimeMicroseconds',
  'ParallelParsingInputFormat', 'FileOpen', 'WriteBufferFromFileDescriptorWriteBytes', 'DiskWriteElapsedMicroseconds',
];

/**
 * A statement's kind for the tally: lane, verb and first table, plus `grouped` for a GROUP BY
 * (the ingest writer's duplicate check) — enough to tell apart what the ingest path issues.
 */
export function statementKind(lane: string, statement: Fragment | string): string {
  const text = typeof statement === 'string' ? statement : textOf(statement);
  const table = /\b(?:FROM|INTO|TABLE)\s+(?:IF NOT EXISTS\s+)?`?[A-Za-z0-9_]+`?\.`?([A-Za-z0-9_]+)`?/i.exec(text)?.[1] ?? '?';
  const verb = /^\s*(?:WITH\b[\s\S]*?\)\s*)?(SELECT|INSERT|ALTER|OPTIMIZE|CREATE|SYSTEM)/i.exec(text)?.[1]?.toLowerCase() ?? 'other';
  return `${lane} ${verb} ${table}${/\bGROUP BY\b/i.test(text) ? ' grouped' : ''}`;
}

/** The fragment's SQL text without its values (kinds only). */
function textOf(fragment: Fragment): string {
  return fragment.parts.map((p) => (typeof p === 'string' ? p : p.kind === 'Fragment' ? textOf(p) : '?')).join('');
}

export class StatementStats {
  private readonly kinds = new Map<string, KindStats>();
  private startEvents: Record<string, number> | null = null;

  constructor(private readonly file: string) {}

  async start(client: ClickHouseClient): Promise<void> {
    this.startEvents = await engineEvents(client);
  }

  /** Runs `work` and adds it to `kind`. */
  async measure<T>(kind: string, work: () => Promise<T>, bytesOf: (result: T) => number = () => 0): Promise<T> {
    const started = performance.now();
    const result = await work();
    const entry = this.kinds.get(kind) ?? { statements: 0, ms: 0, bytes: 0 };
    entry.statements++;
    entry.ms += performance.now() - started;
    entry.bytes += bytesOf(result);
    this.kinds.set(kind, entry);
    return result;
  }

  /** Writes the tally and the engine counters' change since start(). */
  async write(client: ClickHouseClient): Promise<void> {
    const end = await engineEvents(client);
    const events: Record<string, number> = {};
    for (const [name, value] of Object.entries(end)) events[name] = value - (this.startEvents?.[name] ?? 0);
    fs.writeFileSync(this.file, JSON.stringify({ kinds: Object.fromEntries(this.kinds), events }));
  }
}

async function engineEvents(client: ClickHouseClient): Promise<Record<string, number>> {
  const result = await client.query({
    query: 'SELECT event, value FROM system.events WHERE event IN {names:Array(String)}',
    query_params: { names: ENGINE_EVENTS },
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ event: string; value: string | number }>();
  return Object.fromEntries(rows.map((r) => [r.event, Number(r.value)]));
}
