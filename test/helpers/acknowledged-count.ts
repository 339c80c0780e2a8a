import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { lookoutTraceId } from '../../src/spans/trace-id.js';
import { SPANS_PER_RUN } from './steady-sender.js';

/**
 * What a store holds of a project against what a steady sender had acknowledged (steady-sender.ts:
 * runs of SPANS_PER_RUN spans, one trace each): the store-fault tests' and the fault benchmark's
 * exact count. Read straight from ClickHouse, every row version (no FINAL), so a span stored twice
 * shows.
 */
export interface AcknowledgedCount {
  /** Runs acknowledged (answered 200). */
  acknowledged: number;
  /** Acknowledged traces with no span stored. */
  lost: string[];
  /** Stored traces never acknowledged. */
  unacknowledged: string[];
  /** Traces whose span rows are not exactly SPANS_PER_RUN distinct spans once each. */
  doubled: string[];
  /** generation.completed events, each generation once (FINAL folds settling's newer versions). */
  generations: number;
  /** Runs settled (trace.processed events, FINAL). */
  processed: number;
}

export async function acknowledgedCount(ch: ClickHouseStore, projectId: string, acknowledgedOtelTraceIds: Iterable<string>): Promise<AcknowledgedCount> {
  const rows = async <T>(query: string) => (await (await ch.client.query({ query, query_params: { p: projectId }, format: 'JSONEachRow' })).json<T>());
  const spans = await rows<{ trace_id: string; n: string; u: string }>(
    `SELECT trace_id, count() AS n, uniqExact(span_id) AS u FROM ${ch.table('spans')} WHERE project_id = {p:String} GROUP BY trace_id`,
  );
  const expected = new Set([...acknowledgedOtelTraceIds].map((t) => lookoutTraceId(projectId, t)));
  const stored = new Set(spans.map((r) => r.trace_id));
  const count = async (table: string) => Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${ch.table(table)} FINAL WHERE project_id = {p:String}`))[0].n);
  return {
    acknowledged: expected.size,
    lost: [...expected].filter((t) => !stored.has(t)),
    unacknowledged: [...stored].filter((t) => !expected.has(t)),
    doubled: spans.filter((r) => Number(r.n) !== SPANS_PER_RUN || Number(r.u) !== SPANS_PER_RUN).map((r) => r.trace_id),
    generations: await count('event_generation_completed'),
    processed: await count('event_trace_processed'),
  };
}
