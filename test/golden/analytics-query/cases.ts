/**
 * Representative analytics queries whose compiled SQL and parameters are pinned in the
 * neighbouring `<name>.sql` files (analytics-query.test.ts compares them; integration tests run the
 * same bodies on the embedded ClickHouse). All windows sit in the week before 2026-11-22.
 */
export const GOLDEN_TENANT = 'tenant-golden';
export const GOLDEN_PROJECT = 'project-golden';

const window = { start: '2026-11-15T00:00:00Z', end_exclusive: '2026-11-22T00:00:00Z' };

export const GOLDEN_CASES: Record<string, Record<string, unknown>> = {
  'count-without-groups': {
    from: 'trace.processed',
    ...window,
    measures: [{ as: 'traces', agg: 'count' }],
  },
  'model-latency-scorecard': {
    from: 'generation.completed',
    ...window,
    measures: [
      { as: 'calls', agg: 'count' },
      { as: 'p50_ms', agg: 'p50', field: 'duration_ms' },
      { as: 'p95_ms', agg: 'p95', field: 'duration_ms' },
      { as: 'p99_ms', agg: 'p99', field: 'duration_ms' },
      { as: 'input_tokens', agg: 'sum', field: 'input_tokens' },
      { as: 'avg_tps', agg: 'avg', field: 'tps' },
      { as: 'traces', agg: 'uniqExact', field: 'trace_id' },
    ],
    group_by: [{ field: 'model' }],
    order_by: [{ measure: 'p95_ms', direction: 'desc' }],
    limit: 10,
  },
  'measure-filters': {
    from: 'tool.called',
    ...window,
    measures: [
      { as: 'calls', agg: 'count' },
      { as: 'failures', agg: 'count', filter: { field: 'error', op: 'eq', value: 1 } },
      { as: 'slowest_ok_ms', agg: 'max', field: 'duration_ms', filter: { field: 'error', op: 'eq', value: 0 } },
      { as: 'failing_tools', agg: 'uniqExact', field: 'tool', filter: { field: 'error', op: 'eq', value: 1 } },
    ],
    group_by: [{ field: 'agent_name', as: 'agent' }],
  },
  'bucket-minute': { from: 'span.errored', ...window, measures: [{ as: 'errors', agg: 'count' }], group_by: [{ bucket: 'minute' }] },
  'bucket-hour': { from: 'span.errored', ...window, measures: [{ as: 'errors', agg: 'count' }], group_by: [{ bucket: 'hour', as: 'hour' }] },
  'bucket-day': { from: 'trace.processed', ...window, measures: [{ as: 'tokens', agg: 'sum', field: 'total_tokens' }], group_by: [{ bucket: 'day', as: 'day' }, { field: 'agent_name' }] },
  'bucket-week': { from: 'trace.processed', ...window, measures: [{ as: 'traces', agg: 'count' }], group_by: [{ bucket: 'week' }] },
  'bucket-month': { from: 'generation.completed', ...window, measures: [{ as: 'calls', agg: 'count' }], group_by: [{ bucket: 'month', as: 'month' }] },
  'every-filter-op': {
    from: 'generation.completed',
    ...window,
    measures: [{ as: 'calls', agg: 'count' }],
    filters: [
      { field: 'model', op: 'eq', value: 'gpt-4o' },
      { field: 'surface', op: 'neq', value: '' },
      { field: 'input_tokens', op: 'gt', value: 10 },
      { field: 'input_tokens', op: 'gte', value: 11 },
      { field: 'duration_ms', op: 'lt', value: 2500.5 },
      { field: 'duration_ms', op: 'lte', value: 2500 },
      { field: 'trace_id', op: 'in', value: ['a', 'b', 'c'] },
      { field: 'tps', op: 'is_not_null' },
      { field: 'output_tokens', op: 'in', value: [1, 2.5, -3] },
    ],
  },
  'is-null': {
    from: 'trace.processed',
    ...window,
    measures: [{ as: 'unpriced', agg: 'count' }],
    filters: [{ field: 'estimated_cost_usd', op: 'is_null' }],
  },
  'issue-event': {
    from: 'issue.resolved',
    ...window,
    measures: [{ as: 'resolved', agg: 'count' }, { as: 'people', agg: 'uniqExact', field: 'user_id' }],
    group_by: [{ bucket: 'day' }],
  },
  'join-agents-tools': {
    from: 'trace.processed',
    ...window,
    measures: [{ as: 'traces', agg: 'count' }, { as: 'failed', agg: 'count', filter: { field: 'error_count', op: 'gt', value: 0 } }],
    group_by: [{ field: 'agent_name' }],
    join: {
      from: 'tool.called',
      on: 'agent_name',
      filters: [{ field: 'error', op: 'eq', value: 1 }],
      measures: [{ as: 'failed_calls', agg: 'count' }, { as: 'failing_tools', agg: 'uniqExact', field: 'tool' }],
    },
    order_by: [{ measure: 'failed', direction: 'desc' }],
  },
  'join-tools-generations': {
    from: 'tool.called',
    ...window,
    measures: [{ as: 'calls', agg: 'count' }],
    group_by: [{ field: 'trace_id' }],
    join: { from: 'generation.completed', on: 'trace_id', measures: [{ as: 'output_tokens', agg: 'sum', field: 'output_tokens' }] },
    limit: 100,
  },
  'join-tools-span-errors': {
    from: 'tool.called',
    ...window,
    measures: [{ as: 'calls', agg: 'count' }],
    group_by: [{ field: 'trace_id' }],
    join: { from: 'span.errored', on: 'trace_id', measures: [{ as: 'span_errors', agg: 'count' }] },
  },
  'generation-cost': {
    from: 'generation.completed',
    ...window,
    measures: [{ as: 'cost', agg: 'generation_cost' }, { as: 'calls', agg: 'count' }],
    filters: [{ field: 'surface', op: 'eq', value: 'otlp' }],
    group_by: [{ field: 'model' }, { bucket: 'hour', as: 'hour' }],
  },
  'trace-cost': {
    from: 'trace.processed',
    ...window,
    measures: [{ agg: 'trace_cost' }, { as: 'traces', agg: 'count' }],
    group_by: [{ bucket: 'day', as: 'day' }],
  },
  'trace-cost-only': {
    from: 'trace.processed',
    ...window,
    measures: [{ agg: 'trace_cost' }],
  },
  'hostile-values': {
    from: 'tool.called',
    ...window,
    measures: [{ as: 'calls', agg: 'count' }],
    filters: [
      { field: 'tool', op: 'eq', value: "x' OR 1=1 --" },
      { field: 'agent_name', op: 'in', value: ['a\\', "b'); DROP TABLE lookout.event_tool_called; --", 'nul\u0000byte', '雪\u{1F600}', '`backtick`', '{p0:String}'] },
      { field: 'duration_ms', op: 'gt', value: 1e308 },
    ],
  },
};
