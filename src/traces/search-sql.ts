import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { shardLocalTable } from '../platform/clickhouse/clickhouse-layout.js';
import { join, param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import type { SearchQuery, SearchTerm } from './search-query.js';

/**
 * The SQL of trace search over `trace_content` (clickhouse/014_trace_content.sql, granules of 256
 * rows since 017). Every term is a bound value; field names come from the allowlist of
 * trace-content.ts.
 *
 * A term's condition on a row is `text_norm LIKE '%term%'` (its LIKE wildcards escaped), in its
 * field when it names one. The table's bigram text index reads the same condition and picks the rows
 * holding all of the term's two-character sequences, so ClickHouse reads only the granules holding
 * such rows; the LIKE itself then decides every row that is read, so the answer is exact whatever the
 * index skipped or kept. A trace is a match when each positive term holds on one of its newest rows
 * (the latest settling of each trace and field) and no negated term holds on any.
 *
 * Newest rows are found two ways. Among given traces (`within`: a page of candidates), every row of
 * those traces is read by the primary key, without FINAL, and each (trace, field) keeps its row of
 * the highest processed_at (argMax): FINAL would read each part's granules around every id in full,
 * where a plain read first checks the trace_id column (PREWHERE) and reads text only where the trace
 * is. Over the whole project, only rows holding some term can be read at all, so the read is FINAL
 * (which settles versions before the condition) with the condition.
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

/** The bounds on the trace's timestamp (a column or an expression of it). */
function timeConditions(b: ContentBounds, timestamp: Fragment = raw('timestamp')): Fragment[] {
  const where: Fragment[] = [];
  if (b.start !== undefined) where.push(sql`${timestamp} >= toDateTime64(${param('String', b.start)}, 3, 'UTC')`);
  if (b.end !== undefined) where.push(sql`${timestamp} < toDateTime64(${param('String', b.end)}, 3, 'UTC')`);
  if (b.notAfter !== undefined) where.push(sql`${timestamp} <= toDateTime64(${param('String', b.notAfter)}, 3, 'UTC')`);
  if (b.contentSince !== undefined) where.push(sql`${timestamp} >= toDateTime64(${param('String', b.contentSince)}, 3, 'UTC')`);
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
  const table = scopedTable(ch.table(shardLocalTable('trace_content', ch.cluster)));
  const wanted = (i: number) => raw(query.terms[i].negated ? '0' : '1');
  if (bounds.within !== undefined) {
    // Per (trace, field) its newest row's timestamp and term conditions; ties of processed_at do
    // not occur (each settling of a trace stamps its own time).
    const latest = sql`argMax(tuple(timestamp, ${join(conditions, ', ')}), processed_at)`;
    const having = query.terms.map((_, i) => sql`max(tupleElement(latest, ${raw(String(i + 2))})) = ${wanted(i)}`);
    return sql`SELECT trace_id FROM (
              SELECT trace_id, ${latest} AS latest FROM ${table}
              WHERE ${tenantGuard(scope)} AND trace_id IN ${param('Array(String)', bounds.within)}
              GROUP BY trace_id, field
            )
            ${timeWhere(timeConditions(bounds, raw('tupleElement(latest, 1)')))}
            GROUP BY trace_id
            HAVING ${join(having, ' AND ')}`;
  }
  const having = query.terms.map((_, i) => sql`max(${conditions[i]}) = ${wanted(i)}`);
  return sql`SELECT trace_id FROM ${table} FINAL
            WHERE ${join([tenantGuard(scope), ...timeConditions(bounds), sql`(${join(conditions, ' OR ')})`], ' AND ')}
            GROUP BY trace_id
            HAVING ${join(having, ' AND ')}`;
}

function timeWhere(conditions: Fragment[]): Fragment {
  return conditions.length === 0 ? sql`` : sql`WHERE ${join(conditions, ' AND ')}`;
}

/**
 * `SELECT DISTINCT trace_id` of the traces with some stored row holding the term within the bounds,
 * at most `cap + 1` of them: read without FINAL, through the text index, so it also sees a trace's
 * older settlings and is a superset of the traces whose newest rows hold the term. A term found in
 * few traces thus names the only candidates a search needs to check (trace-search.ts).
 */
export function termTraceIds(ch: ClickHouseStore, scope: TenantScope, term: SearchTerm, bounds: ContentBounds, cap: number): Fragment {
  const within = bounds.within === undefined ? [] : [sql`trace_id IN ${param('Array(String)', bounds.within)}`];
  return sql`SELECT DISTINCT trace_id FROM ${scopedTable(ch.table('trace_content'))}
            WHERE ${join([tenantGuard(scope), ...within, ...timeConditions(bounds), termCondition(term)], ' AND ')}
            LIMIT ${raw(String(cap + 1))}`;
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
 * the first such term (positions in code points: text and text_norm align, search-text.ts). The
 * newest row of each (trace, field) is picked by argMax over a plain read by the key, as for
 * matchingTraceIds among given traces.
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
              FROM (
                SELECT trace_id, field, tupleElement(newest, 1) AS text, tupleElement(newest, 2) AS text_norm
                FROM (
                  SELECT trace_id, field, argMax(tuple(text, text_norm), processed_at) AS newest
                  FROM ${scopedTable(ch.table('trace_content'))}
                  WHERE ${tenantGuard(scope)} AND trace_id IN ${param('Array(String)', traceIds)}
                  GROUP BY trace_id, field
                )
              )
            )
            WHERE term > 0`;
}
