import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';

/**
 * Ids for the query benchmarks' seeded rows, shaped like the ones ingestion writes: a trace id is the
 * canonical text of a UUID spread over the whole space (as v5 UUIDs are), a span id 16 hex digits.
 * The seeding SQL works on either schema of the per-span tables — text ids (before ClickHouse
 * migration 009) or UUID / UInt64 — so a base checkout and this one seed the same rows and compare.
 */

// 16 hex characters of a UInt64 (hex() drops leading zero bytes).
const hex16 = (value: string) => `leftPad(hex(${value}), 16, '0')`;

/** The trace id of trace number `n` (an SQL expression), as UUID text; a UUID column parses it. */
export const traceIdSql = (n: string) => `UUIDNumToString(toFixedString(unhex(concat(${hex16(`cityHash64(${n}, 5)`)}, ${hex16(`cityHash64(${n}, 6)`)})), 16))`;

/** A span id for row `n`: its hex text for a String column, the UInt64 it spells for a UInt64 one. */
export async function spanIdSql(ch: ClickHouseStore, table: string, n: string): Promise<string> {
  const result = await ch.client.query({
    query: `SELECT type FROM system.columns WHERE database = {db:String} AND table = {t:String} AND name = 'span_id'`,
    query_params: { db: ch.database, t: table },
    format: 'JSONEachRow',
  });
  const [column] = await result.json<{ type: string }>();
  return column?.type === 'UInt64' ? `cityHash64(${n}, 7)` : `lower(${hex16(`cityHash64(${n}, 7)`)})`;
}
