import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { join, param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import type { SearchQuery, SearchTerm } from './search-query.js';

/**
 * The SQL of trace search over `trace_content` (clickhouse/014_trace_content.sql). Every term is a
 * bound value; field names come from the allowlist of trace-content.ts.
 *
 * A term's condition on a row is `text_norm LIKE '%term%'` (its LIKE wildcards escaped), in its
 * field when it names one. The table's bigram text index reads the same condition and skips rows
 * (granules) that cannot contain the term; the LIKE itself then decides every row that is read, so
 * the answer is exact whatever the index skipped or kept. A trace is a match when each positive
 * term holds on one of its rows and no negated term holds on any; rows are read with FINAL (the
 * latest settling of each trace and field), and only rows holding some term are read at all.
 */

/** Escapes LIKE's wildcards (and its escape character) so the term is matched as it is. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function termCondition(term: SearchTerm): Fragment {
  const like = sql`text_norm LIKE ${param('String', likeContains(term.text))}`;
  return term.field === null ? sql`(${like})` : sql`(field = ${param('String', term.field)} AND ${like})`;
}

export interface ContentBounds {
  /** DateTime64 text, inclusive. */
  start?: string;
  /** DateTime64 text, exclusive. */
  end?: string;
  /** DateTime64 text, inclusive: the keyset cursor's timestamp (rows at it may still follow on the page). */
  notAfter?: string;
  /** Only these traces. */
  within?: string[];
  /** DateTime64 text, inclusive: older content has expired (retention) and is not searched. */
  contentSince?: string;
}

function boundConditions(b: ContentBounds): Fragment[] {
  const where: Fragment[] = [];
  if (b.start !== undefined) where.push(sql`timestamp >= toDateTime64(${param('String', b.start)}, 3, 'UTC')`);
  if (b.end !== undefined) where.push(sql`timestamp < toDateTime64(${param('String', b.end)}, 3, 'UTC')`);
  if (b.notAfter !== undefined) where.push(sql`timestamp <= toDateTime64(${param('String', b.notAfter)}, 3, 'UTC')`);
  if (b.within !== undefined) where.push(sql`trace_id IN ${param('Array(String)', b.within)}`);
  if (b.contentSince !== undefined) where.push(sql`timestamp >= toDateTime64(${param('String', b.contentSince)}, 3, 'UTC')`);
  return where;
}

/**
 * `SELECT trace_id` of the traces matching the query, within the bounds: a subquery for the trace
 * list's `trace_id IN (…)`.
 *
 * On a cluster the trace list reads the Distributed `traces`, and each shard runs the query on its
 * own rows. trace_content is sharded by the trace as traces is (clickhouse-layout.ts), so each shard
 * holds the content of exactly its own traces: the subquery names the shard's local table and is
 * answered where it runs, instead of fanning out to every shard again (which ClickHouse refuses,
 * code 288) or shipping the whole matching set to every shard (GLOBAL IN).
 */
export function matchingTraceIds(ch: ClickHouseStore, scope: TenantScope, query: SearchQuery, bounds: ContentBounds): Fragment {
  const conditions = query.terms.map(termCondition);
  const having = query.terms.map((term, i) => sql`max(${conditions[i]}) = ${raw(term.negated ? '0' : '1')}`);
  const table = ch.table(ch.cluster ? 'trace_content_local' : 'trace_content');
  return sql`SELECT trace_id FROM ${scopedTable(table)} FINAL
            WHERE ${join([tenantGuard(scope), ...boundConditions(bounds), sql`(${join(conditions, ' OR ')})`], ' AND ')}
            GROUP BY trace_id
            HAVING ${join(having, ' AND ')}`;
}

/** Code points of the snippet before the match, and in all. */
export const SNIPPET_BEFORE = 60;
export const SNIPPET_CHARS = 200;

export interface MatchRow {
  trace_id: string;
  field: string;
  /** 1-based index of the first positive term this row holds (query order). */
  term: number;
  /** 1-based code point position where the window starts in the field's text. */
  window_start: number;
  window: string;
  /** The field's text length in code points. */
  text_chars: number;
}

/**
 * Per listed trace, its rows holding a positive term, each with a window of its display text around
 * the first such term (positions in code points: text and text_norm align, search-text.ts).
 */
export function matchRows(ch: ClickHouseStore, scope: TenantScope, query: SearchQuery, traceIds: string[]): Fragment {
  const positive = query.terms.filter((t) => !t.negated);
  const positions = positive.map((t) => {
    const found = sql`positionUTF8(text_norm, ${param('String', t.text)})`;
    return t.field === null ? found : sql`if(field = ${param('String', t.field)}, ${found}, 0)`;
  });
  return sql`SELECT trace_id, field, term, greatest(1, toInt64(at) - ${raw(String(SNIPPET_BEFORE))}) AS window_start,
                   substringUTF8(text, window_start, ${raw(String(SNIPPET_CHARS))}) AS window, lengthUTF8(text) AS text_chars
            FROM (
              SELECT trace_id, field, text, [${join(positions, ', ')}] AS found,
                     arrayFirstIndex(p -> p > 0, found) AS term, arrayFirst(p -> p > 0, found) AS at
              FROM ${scopedTable(ch.table('trace_content'))} FINAL
              WHERE ${tenantGuard(scope)} AND trace_id IN ${param('Array(String)', traceIds)}
                AND (${join(positive.map(termCondition), ' OR ')})
            )
            WHERE term > 0`;
}
