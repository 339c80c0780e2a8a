import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { param, raw, sql, type Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { storedIdText } from '../../platform/clickhouse/sql/event-ids.js';
import { processedTraces } from '../../platform/clickhouse/sql/processed-traces.js';
import { scopedTable, tenantGuard } from '../../platform/clickhouse/sql/tenant-guard.js';
import { isoFromDateTime64 } from '../../platform/clickhouse/clickhouse-time.js';

/**
 * The preset metrics every project has (docs/metrics.md). They are OBSERVED: computed from trace
 * data that ingestion writes to ClickHouse, never posted as events. Each one is a small table of
 * SQL over one event table: identifiers here are constants, every value is a bound parameter, and
 * the event tables are read FINAL so a re-processed trace or re-sent span never counts twice
 * (trace.processed through the SQL layer's processedTraces, the one read of that table).
 * "Higher is worse" for all of them, so the monitor rule latest_value > threshold reads as "breached".
 */
export interface PresetDefinition {
  key: string;
  name: string;
  description: string;
  threshold: number;
  intervalHours: number;
  table: 'event_trace_processed' | 'event_tool_called';
  /** One event's value, per row of `table`. */
  valueSql: string;
  /** The interval aggregate over rows of `table`; null when there are none. */
  aggregateSql: string;
  /** Rows of `table` that take part (e.g. traces with a known duration). */
  whereSql: string;
  /** What identifies one event of the metric. */
  idSql: string;
  valueKind: 'boolean' | 'number';
}

export const PRESETS: PresetDefinition[] = [
  {
    key: 'error_rate',
    name: 'Error rate',
    description: 'Share of traces with at least one failed span, over the interval',
    threshold: 0.05,
    intervalHours: 24,
    table: 'event_trace_processed',
    valueSql: "(error_count > 0 OR root_status_code = 'ERROR')",
    aggregateSql: "if(count() = 0, NULL, countIf(error_count > 0 OR root_status_code = 'ERROR') / count())",
    whereSql: '1',
    idSql: 'trace_id',
    valueKind: 'boolean',
  },
  {
    key: 'failing_tool_calls',
    name: 'Failing tool calls',
    description: 'Share of tool calls that failed, over the interval',
    threshold: 0.05,
    intervalHours: 24,
    table: 'event_tool_called',
    valueSql: 'error = 1',
    aggregateSql: 'if(count() = 0, NULL, sum(error) / count())',
    whereSql: '1',
    // The ids' text: tool.called stores them as UUID and UInt64 (event-ids.ts). trace_id itself is
    // read as stored: a UUID's JSON answer is its canonical text.
    idSql: `concat(${storedIdText('uuid', 'trace_id')}, ':', ${storedIdText('hex64', 'span_id')})`,
    valueKind: 'boolean',
  },
  {
    key: 'latency_p95_ms',
    name: 'Latency p95 (ms)',
    description: '95th percentile of trace duration in milliseconds, over the interval',
    threshold: 30_000,
    intervalHours: 24,
    table: 'event_trace_processed',
    valueSql: 'assumeNotNull(root_duration_ms)',
    aggregateSql: 'if(count() = 0, NULL, quantileExact(0.95)(assumeNotNull(root_duration_ms)))',
    whereSql: 'root_duration_ms IS NOT NULL',
    idSql: 'trace_id',
    valueKind: 'number',
  },
];

export function presetByKey(key: string): PresetDefinition | undefined {
  return PRESETS.find((p) => p.key === key);
}

export interface PresetScope {
  tenantId: string;
  projectId: string;
  agentName: string | null;
  intervalHours: number;
}

export interface ObservedEvent {
  id: string;
  trace_id: string;
  created_at: string;
  value: boolean | number;
}

export interface ObservedFigures {
  total_events: number;
  recent_events: ObservedEvent[];
  latest_value: number | null;
}

/** ClickHouse DateTime64 text ('YYYY-MM-DD hh:mm:ss.sss', UTC) → ISO 8601. */
function isoFromClickHouse(text: string): string {
  return new Date(isoFromDateTime64(text)).toISOString();
}

/** A metric's figures are analytics: the guarded, gated, read-only lane of the SQL layer. */
function rows<T>(ch: ClickHouseStore, scope: PresetScope, statement: Fragment): Promise<T[]> {
  return ch.read<T>(statement, { lane: 'analytics', scope });
}

/** total_events, the latest 10 events and the interval aggregate of one preset metric. */
export async function observedFigures(ch: ClickHouseStore, preset: PresetDefinition, scope: PresetScope): Promise<ObservedFigures> {
  // The preset's SQL pieces are constants of this file (never caller input); values are bound.
  const agent = scope.agentName !== null ? sql` AND agent_name = ${param('String', scope.agentName)}` : raw('');
  const where = () => sql`${tenantGuard(scope)} AND (${raw(preset.whereSql)})${agent}`;
  // The rows of `cond`, newest version per key: `FROM <source>` of each statement below.
  const rowsOf = (cond: Fragment) =>
    preset.table === 'event_trace_processed'
      ? processedTraces(ch.table(preset.table), cond)
      : sql`${scopedTable(ch.table(preset.table))} FINAL WHERE ${cond}`;
  const since = new Date(Date.now() - scope.intervalHours * 3_600_000);
  const [totals, recent, latest] = await Promise.all([
    rows<{ n: string | number }>(ch, scope, sql`SELECT count() AS n FROM ${rowsOf(where())}`),
    rows<{ id: string; trace_id: string; ts: string; v: number }>(
      ch,
      scope,
      sql`SELECT ${raw(preset.idSql)} AS id, trace_id, toString(timestamp) AS ts, toFloat64(${raw(preset.valueSql)}) AS v
       FROM ${rowsOf(where())} ORDER BY timestamp DESC, id DESC LIMIT 10`,
    ),
    rows<{ v: number | null }>(
      ch,
      scope,
      sql`SELECT toNullable(toFloat64(${raw(preset.aggregateSql)})) AS v
       FROM ${rowsOf(sql`${where()} AND timestamp >= ${param("DateTime64(3, 'UTC')", since)}`)}`,
    ),
  ]);
  return {
    total_events: Number(totals[0]?.n ?? 0),
    recent_events: recent.map((r) => ({
      id: r.id,
      trace_id: r.trace_id,
      created_at: isoFromClickHouse(r.ts),
      value: preset.valueKind === 'boolean' ? r.v === 1 : Number(r.v),
    })),
    latest_value: latest[0]?.v === null || latest[0]?.v === undefined ? null : Number(latest[0].v),
  };
}
