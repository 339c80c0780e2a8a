import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import type { SqlHandle } from '../../src/platform/postgres/postgres.js';
import { waitFor } from '../integration/ingest/otlp-client.js';

/**
 * What the read-bound tests share: a store that has been filling (spans of other traces written an
 * hour ago) and the engine's own count of rows selected, which a loaded machine does not change.
 */

/** Waits until the stored-trace registry's backfill recorded that it covers the table: only then does it answer "created". */
export async function registryComplete(sql: SqlHandle): Promise<void> {
  await waitFor(async () => {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from shared_state where name = 'stored_traces_backfill'`;
    return r.n > 0 ? true : undefined;
  }, 60_000, 'the stored-trace registry to be complete');
}

/** `spans` rows of other traces of the project (30 spans each), written and ingested an hour ago. */
export async function seedOldSpans(ch: ClickHouseStore, tenantId: string, projectId: string, spans: number): Promise<void> {
  await ch.client.command({
    query: `INSERT INTO ${ch.table('spans')} (tenant_id, project_id, trace_id, otel_trace_id, span_id, name, kind, start_time_ns, end_time_ns, status_code, attributes, events, resource, timestamp, ingested_at)
      SELECT {t:String}, {p:String}, toString(reinterpretAsUUID(MD5(toString(intDiv(number, 30))))), hex(MD5(toString(intDiv(number, 30)))),
             lower(hex(cityHash64(number))), 'old', 'INTERNAL', 0, 1000000, 'OK', '{}', '[]', '{}', now64(3) - toIntervalHour(1), now64(3) - toIntervalHour(1)
      FROM numbers(${spans})`,
    query_params: { t: tenantId, p: projectId },
  });
}

/** Rows the engine has selected since it started (system.events SelectedRows). */
export async function selectedRows(ch: ClickHouseStore): Promise<number> {
  const result = await ch.client.query({ query: `SELECT value FROM system.events WHERE event = 'SelectedRows'`, format: 'JSONEachRow' });
  const rows = await result.json<{ value: string }>();
  return Number(rows[0]?.value ?? 0);
}
