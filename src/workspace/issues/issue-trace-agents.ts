import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { param, sql } from '../../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard } from '../../platform/clickhouse/sql/tenant-guard.js';

/** Trace ids per statement: a bounded statement text whatever the number of traces. */
const LOOKUP_CHUNK = 2000;

/**
 * The agent name of each of the given traces of the project that is still stored and has one, by
 * trace id: read from the trace summaries (the newest summary of each, FINAL) by their primary key,
 * a chunk of ids per statement, on the interactive lane. Occurrences do not store their trace's
 * agent, so the issue list's agent column is read here.
 */
export async function traceAgentNames(
  ch: ClickHouseStore,
  tenantId: string,
  projectId: string,
  traceIds: readonly string[],
  chunk = LOOKUP_CHUNK,
): Promise<Map<string, string>> {
  const scope = { tenantId, projectId };
  const agents = new Map<string, string>();
  for (let i = 0; i < traceIds.length; i += chunk) {
    const rows = await ch.read<{ trace_id: string; agent_name: string }>(
      sql`SELECT trace_id, agent_name FROM ${scopedTable(ch.table('traces'))} FINAL
              WHERE ${tenantGuard(scope)} AND trace_id IN ${param('Array(String)', traceIds.slice(i, i + chunk))}`,
      { lane: 'interactive', scope },
    );
    for (const row of rows) if (row.agent_name !== '') agents.set(row.trace_id, row.agent_name);
  }
  return agents;
}
