/**
 * The catalog is the documented event list to the letter, and clickhouse/002_events.sql has every column it
 * names with a fitting type (the live-engine check is test/integration/analytics-query/engine.test.ts).
 */
import fs from 'node:fs';
import { describe, expect, test } from 'vitest';
import { allEvents, catalogResponse, findEvent } from '../../../src/analytics/catalog.js';

const fields = (name: string) => {
  const event = catalogResponse().events.find((e) => e.name === name)!;
  return { dimensions: event.dimensions.map((d) => d.field), measures: event.measures.map((m) => m.field), cost: event.cost_measures };
};
const COMMON = ['actor', 'surface', 'user_id', 'api_key_id'];

describe('catalog per the documented events', () => {
  test('trace.processed', () => {
    expect(fields('trace.processed')).toEqual({
      dimensions: ['agent_name', 'root_status_code', ...COMMON],
      measures: ['root_duration_ms', 'error_count', 'failing_tool_calls', 'input_tokens', 'output_tokens', 'total_tokens', 'estimated_cost_usd'],
      cost: ['trace_cost'],
    });
    const total = catalogResponse().events.find((e) => e.name === 'trace.processed')!.measures.find((m) => m.field === 'total_tokens')!;
    expect(total.aggs).toEqual(['sum']);
  });

  test('generation.completed', () => {
    expect(fields('generation.completed')).toEqual({
      dimensions: ['model', 'trace_id', 'span_id', ...COMMON],
      measures: ['duration_ms', 'input_tokens', 'output_tokens', 'tps', 'error'],
      cost: ['generation_cost'],
    });
  });

  test('tool.called and span.errored', () => {
    expect(fields('tool.called')).toEqual({ dimensions: ['tool', 'agent_name', 'trace_id', 'span_id', ...COMMON], measures: ['duration_ms', 'output_tokens', 'error'], cost: [] });
    expect(fields('span.errored')).toEqual({ dimensions: ['span_name', 'trace_id', 'span_id', ...COMMON], measures: [], cost: [] });
  });

  test('the eight issue.* events carry only the common fields', () => {
    const issues = catalogResponse().events.filter((e) => e.name.startsWith('issue.'));
    expect(issues.map((e) => e.name)).toEqual(['issue.created', 'issue.resolved', 'issue.dismissed', 'issue.reopened', 'issue.review_started', 'issue.flagged', 'issue.unflagged', 'issue.chat_sent']);
    for (const e of issues) expect({ d: e.dimensions.map((d) => d.field), m: e.measures, c: e.cost_measures }).toEqual({ d: COMMON, m: [], c: [] });
  });

  test('types, filter_ops, buckets and limits', () => {
    const catalog = catalogResponse();
    for (const e of catalog.events) {
      for (const d of e.dimensions) expect(d).toEqual({ field: d.field, type: 'string' });
      for (const m of e.measures) expect(Object.keys(m)).toEqual(['field', 'type', 'aggs']);
    }
    expect(catalog.filter_ops).toEqual(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'is_null', 'is_not_null']);
    expect(catalog.buckets).toEqual(['minute', 'hour', 'day', 'week', 'month']);
    expect(catalog.limits).toEqual({ max_group_by: 4, max_measures: 12, max_filters: 12, max_order_by: 4, max_in_values: 20, max_rows: 10000, max_window_days: 90 });
  });
});

describe('catalog against clickhouse/002_events.sql', () => {
  // 002 creates the event tables; 009 rebuilds the per-span ones with their ids' types (<table>_v009),
  // 010 partitioned by day (<table>_v010).
  const ddl = ['clickhouse/002_events.sql', 'clickhouse/009_event_ids_uuid_uint64.sql', 'clickhouse/010_event_partitions_by_day.sql']
    .map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  const tables = new Map<string, Map<string, string>>();
  for (const match of ddl.matchAll(/CREATE TABLE IF NOT EXISTS \{db\}\.(\w+)[^(]*\(([\s\S]*?)\n\)/g)) {
    const columns = new Map<string, string>();
    for (const line of match[2].split('\n')) {
      const col = /^\s*(\w+)\s+(.+?),?\s*$/.exec(line);
      if (col) columns.set(col[1], col[2].replace(/\s+DEFAULT.*$/, ''));
    }
    tables.set(match[1], columns);
  }

  test('every field is a column of its table with a fitting type', () => {
    for (const event of allEvents()) {
      const columns = tables.get(event.table);
      expect(columns, event.table).toBeDefined();
      // Ids stored as ids (catalog `stored`) are rebuilt with their types by 009's <table>_v009 copy.
      const rebuilt = tables.get(`${event.table}_v009`);
      const STORED: Record<string, RegExp> = { uuid: /^UUID( CODEC\(LZ4\))?$/, hex64: /^UInt64( CODEC\(LZ4\))?$/ };
      for (const d of event.dimensions) {
        const type = d.stored ? rebuilt?.get(d.column) : columns!.get(d.column);
        expect(type, `${event.name}.${d.field}`).toMatch(d.stored ? STORED[d.stored] : /^(LowCardinality\()?String\)?$/);
      }
      for (const m of event.measures) {
        const type = columns!.get(m.column)!;
        expect(type, `${event.name}.${m.field}`).toMatch(m.storage === 'integer' ? /^U?Int\d+$/ : /^(Nullable\()?Float64\)?$/);
        expect(type.startsWith('Nullable('), `${event.name}.${m.field}`).toBe(m.nullable);
      }
      for (const guard of ['tenant_id', 'project_id', 'timestamp']) expect(columns!.has(guard)).toBe(true);
    }
    expect(findEvent('issue.flagged')!.discriminator).toEqual({ column: 'name', value: 'issue.flagged' });
    expect(tables.get('event_issue')!.get('name')).toMatch(/String/);
  });

  test('FINAL skips cross-partition merging only where a row cannot change partition', () => {
    for (const event of allEvents()) {
      // The table as the newest migration defines it: a rebuild (clickhouse/009, 010) defines it
      // again under its copy's name (<table>_vNNN), which then takes the table's place.
      const statements = [...ddl.matchAll(new RegExp(`CREATE TABLE IF NOT EXISTS \\{db\\}\\.${event.table}(?:_v\\d{3})?\\b[\\s\\S]*?;`, 'g'))];
      const statement = statements.at(-1)![0];
      const orderBy = /ORDER BY \(([^)]*)\)/.exec(statement)![1].split(',').map((c) => c.trim());
      const partitionBy = /PARTITION BY (.+)/.exec(statement)![1].trim();
      const safe = orderBy.includes('timestamp') && ['toYYYYMM(timestamp)', 'toDate(timestamp)'].includes(partitionBy);
      if (['event_generation_completed', 'event_tool_called', 'event_span_errored'].includes(event.table)) expect(partitionBy, event.name).toBe('toDate(timestamp)');
      expect(event.finalWithinPartitions, event.name).toBe(safe);
    }
    expect(findEvent('trace.processed')!.finalWithinPartitions).toBe(false);
  });
});
