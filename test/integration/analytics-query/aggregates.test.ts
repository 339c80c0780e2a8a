/**
 * The analytics query on the embedded ClickHouse: every figure is checked against a reference
 * computed in this file from the seeded rows (dataset.ts), never against a hard-coded answer.
 */
import { describe, expect, test } from 'vitest';
import { useSeededQueryStore } from './seeded-store.js';
import {
  avg, dayText, EDGE, END, groupRows, hourText, minuteText, monthText, OTHER_PROJECT, OTHER_TENANT, PROJECT,
  quantileExact, sum, sundayText, TENANT, uniq,
} from './dataset.js';
import { isoSecond } from './seed.js';
import { spanIdFor } from '../../helpers/event-ids.js';

const seeded = useSeededQueryStore();
const { run } = seeded;

describe('measures', () => {
  test('count, sum, avg, min, max, percentiles and uniqExact without groups: one row', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'calls', agg: 'count' },
        { as: 'input', agg: 'sum', field: 'input_tokens' },
        { as: 'avg_ms', agg: 'avg', field: 'duration_ms' },
        { as: 'min_out', agg: 'min', field: 'output_tokens' },
        { as: 'max_out', agg: 'max', field: 'output_tokens' },
        { as: 'p50_ms', agg: 'p50', field: 'duration_ms' },
        { as: 'p95_ms', agg: 'p95', field: 'duration_ms' },
        { as: 'p99_out', agg: 'p99', field: 'output_tokens' },
        { as: 'traces', agg: 'uniqExact', field: 'trace_id' },
        { as: 'models', agg: 'uniqExact', field: 'model' },
        { as: 'avg_tps', agg: 'avg', field: 'tps' },
      ],
    });
    const g = seeded.live.generations;
    expect(result.rows).toHaveLength(1);
    const row = result.rows[0];
    expect(row.calls).toBe(g.length);
    expect(row.input).toBe(sum(g.map((r) => Number(r.input_tokens))));
    expect(row.avg_ms).toBeCloseTo(avg(g.map((r) => r.duration_ms))!, 6);
    expect(row.min_out).toBe(Math.min(...g.map((r) => r.output_tokens)));
    expect(row.max_out).toBe(Math.max(...g.map((r) => r.output_tokens)));
    expect(row.p50_ms).toBe(quantileExact(g.map((r) => r.duration_ms), 0.5));
    expect(row.p95_ms).toBe(quantileExact(g.map((r) => r.duration_ms), 0.95));
    expect(row.p99_out).toBe(quantileExact(g.map((r) => r.output_tokens), 0.99));
    expect(row.traces).toBe(uniq(g.map((r) => r.trace_id)));
    expect(row.models).toBe(uniq(g.map((r) => r.model)));
    // tps is null when unknown: the average skips those rows.
    expect(row.avg_tps).toBeCloseTo(avg(g.filter((r) => r.tps !== null).map((r) => r.tps!))!, 6);
    expect(Object.keys(row)).toEqual(['calls', 'input', 'avg_ms', 'min_out', 'max_out', 'p50_ms', 'p95_ms', 'p99_out', 'traces', 'models', 'avg_tps']);
    expect(result.truncated).toBe(false);
    expect(result.window).toEqual(seeded.window);
  });

  test('grouped by model: every group, sorted by the groups', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'calls', agg: 'count' },
        { as: 'failures', agg: 'count', filter: { field: 'error', op: 'eq', value: 1 } },
        { as: 'output', agg: 'sum', field: 'output_tokens' },
        { as: 'p95_ms', agg: 'p95', field: 'duration_ms' },
        { as: 'p95_ok_ms', agg: 'p95', field: 'duration_ms', filter: { field: 'error', op: 'eq', value: 0 } },
        { as: 'traces', agg: 'uniqExact', field: 'trace_id' },
      ],
      group_by: [{ field: 'model' }],
    });
    const expected = [...groupRows(seeded.live.generations, (r) => r.model)].map(([model, rows]) => ({
      model,
      calls: rows.length,
      failures: rows.filter((r) => r.error === 1).length,
      output: sum(rows.map((r) => r.output_tokens)),
      p95_ms: quantileExact(rows.map((r) => r.duration_ms), 0.95),
      p95_ok_ms: quantileExact(rows.filter((r) => r.error === 0).map((r) => r.duration_ms), 0.95),
      traces: uniq(rows.map((r) => r.trace_id)),
    }));
    expect(result.rows).toEqual(expected);
    // The missing model is stored as '' and forms its own group.
    expect(result.rows[0].model).toBe('');
  });

  test('a filtered min over rows that never match answers null, not 0', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'calls', agg: 'count' },
        { as: 'none_min', agg: 'min', field: 'duration_ms', filter: { field: 'model', op: 'eq', value: 'no-such-model' } },
        { as: 'none_count', agg: 'count', filter: { field: 'model', op: 'eq', value: 'no-such-model' } },
      ],
    });
    expect(result.rows).toEqual([{ calls: seeded.live.generations.length, none_min: null, none_count: 0 }]);
  });

  test('several quantiles over the same values (one quantilesExact) answer null over no values', async () => {
    const none = { field: 'model', op: 'eq', value: 'no-such-model' };
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'none_p50', agg: 'p50', field: 'duration_ms', filter: none },
        { as: 'none_p99', agg: 'p99', field: 'duration_ms', filter: none },
        { as: 'p99_out', agg: 'p99', field: 'output_tokens' },
        { as: 'p50_out', agg: 'p50', field: 'output_tokens' },
      ],
    });
    const out = seeded.live.generations.map((r) => r.output_tokens);
    expect(result.rows).toEqual([{ none_p50: null, none_p99: null, p99_out: quantileExact(out, 0.99), p50_out: quantileExact(out, 0.5) }]);
  });

  test('an empty window still answers one row without groups, and no rows with groups', async () => {
    const empty = { start: isoSecond(END + 30 * 86_400_000), end_exclusive: isoSecond(END + 31 * 86_400_000) };
    const one = await run({ from: 'tool.called', ...empty, measures: [{ as: 'calls', agg: 'count' }, { as: 'p95', agg: 'p95', field: 'duration_ms' }] });
    expect(one.rows).toEqual([{ calls: 0, p95: null }]);
    const none = await run({ from: 'tool.called', ...empty, measures: [{ as: 'calls', agg: 'count' }], group_by: [{ field: 'tool' }] });
    expect(none).toEqual({ rows: [], truncated: false, window: empty });
  });

  test('the window: start is inclusive, end_exclusive is not, milliseconds count', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }], filters: [{ field: 'span_id', op: 'in', value: ['g-at-start', 'g-at-end', 'g-before-start'].map(spanIdFor) }] });
    expect(result.rows).toEqual([{ calls: 1 }]);
  });
});

describe('FINAL: re-sent spans and re-processed traces count once', () => {
  test('duplicated generation rows do not double count', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }, { as: 'spans', agg: 'uniqExact', field: 'span_id' }] });
    expect(result.rows[0]).toEqual({ calls: seeded.live.generations.length, spans: seeded.live.generations.length });
  });

  test('trace.processed reads the newest processing of each trace', async () => {
    const result = await run({
      from: 'trace.processed',
      measures: [
        { as: 'traces', agg: 'count' },
        { as: 'errors', agg: 'sum', field: 'error_count' },
        { as: 'tokens', agg: 'sum', field: 'total_tokens' },
        { as: 'p95_ms', agg: 'p95', field: 'root_duration_ms' },
        { as: 'failing', agg: 'sum', field: 'failing_tool_calls' },
      ],
      group_by: [{ field: 'agent_name' }],
    });
    const expected = [...groupRows(seeded.live.traces, (t) => t.agent_name)].map(([agent_name, rows]) => ({
      agent_name,
      traces: rows.length,
      errors: sum(rows.map((r) => r.error_count)),
      tokens: sum(rows.map((r) => r.input_tokens + r.output_tokens)),
      p95_ms: quantileExact(rows.filter((r) => r.root_duration_ms !== null).map((r) => r.root_duration_ms!), 0.95),
      failing: sum(rows.map((r) => r.failing_tool_calls)),
    }));
    expect(result.rows).toEqual(expected);
    expect(result.rows.map((r) => r.agent_name)).not.toContain('stale-agent');
  });
});

describe('buckets', () => {
  const buckets = [
    ['minute', minuteText],
    ['hour', hourText],
    ['day', dayText],
    ['week', sundayText],
    ['month', monthText],
  ] as const;
  for (const [bucket, text] of buckets) {
    test(`${bucket}: every bucket with rows, in order, in the documented text form`, async () => {
      const result = await run({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }], group_by: [{ bucket }] });
      const expected = [...groupRows(seeded.live.generations, (r) => text(r.ts))].map(([key, rows]) => ({ bucket: key, calls: rows.length }));
      expect(result.rows).toEqual(expected);
    });
  }

  test('weeks start on Sunday, and the week that straddles the month edge is one bucket', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }], group_by: [{ bucket: 'week', as: 'week' }, { bucket: 'month', as: 'month' }] });
    for (const row of result.rows) expect(new Date(`${row.week as string}T00:00:00Z`).getUTCDay()).toBe(0);
    const edgeWeek = sundayText(EDGE);
    const straddling = result.rows.filter((r) => r.week === edgeWeek);
    const expectedMonths = [...groupRows(seeded.live.generations.filter((r) => sundayText(r.ts) === edgeWeek), (r) => monthText(r.ts))].map(([month, rows]) => ({ week: edgeWeek, month, calls: rows.length }));
    expect(straddling).toEqual(expectedMonths);
    // Unless the month starts on a Sunday, its first week began in the month before.
    if (new Date(EDGE).getUTCDay() !== 0) expect(straddling.map((r) => r.month)).toEqual([monthText(EDGE - 1), monthText(EDGE)]);
  });
});

describe('filters', () => {
  test('in, on strings and numbers', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [{ as: 'calls', agg: 'count' }],
      filters: [
        { field: 'model', op: 'in', value: ['gpt-4o', 'llama-3'] },
        { field: 'error', op: 'in', value: [1] },
      ],
    });
    expect(result.rows[0].calls).toBe(seeded.live.generations.filter((r) => ['gpt-4o', 'llama-3'].includes(r.model) && r.error === 1).length);
  });

  test('comparisons on numbers and strings', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [{ as: 'calls', agg: 'count' }],
      filters: [
        { field: 'input_tokens', op: 'gte', value: 1000 },
        { field: 'input_tokens', op: 'lt', value: 4000 },
        { field: 'duration_ms', op: 'gt', value: 100.5 },
        { field: 'output_tokens', op: 'lte', value: 600 },
        { field: 'model', op: 'neq', value: 'gpt-4o' },
      ],
    });
    const n = seeded.live.generations.filter((r) => Number(r.input_tokens) >= 1000 && Number(r.input_tokens) < 4000 && r.duration_ms > 100.5 && r.output_tokens <= 600 && r.model !== 'gpt-4o').length;
    expect(result.rows[0].calls).toBe(n);
  });

  test('is_null and is_not_null on a nullable measure', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'unknown_tps', agg: 'count', filter: { field: 'tps', op: 'is_null' } },
        { as: 'known_tps', agg: 'count', filter: { field: 'tps', op: 'is_not_null' } },
      ],
    });
    expect(result.rows[0]).toEqual({
      unknown_tps: seeded.live.generations.filter((r) => r.tps === null).length,
      known_tps: seeded.live.generations.filter((r) => r.tps !== null).length,
    });
    const traces = await run({ from: 'trace.processed', measures: [{ as: 'unpriced', agg: 'count' }], filters: [{ field: 'estimated_cost_usd', op: 'is_null' }] });
    expect(traces.rows[0].unpriced).toBe(seeded.live.traces.filter((t) => t.estimated_cost_usd === null).length);
  });

  test('a missing string is the empty string: eq "" matches it, is_null does not', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'no_model', agg: 'count', filter: { field: 'model', op: 'eq', value: '' } },
        { as: 'null_model', agg: 'count', filter: { field: 'model', op: 'is_null' } },
        { as: 'has_model', agg: 'count', filter: { field: 'model', op: 'neq', value: '' } },
        { as: 'no_surface', agg: 'count', filter: { field: 'surface', op: 'eq', value: '' } },
      ],
    });
    expect(result.rows[0]).toEqual({
      no_model: seeded.live.generations.filter((r) => r.model === '').length,
      null_model: 0,
      has_model: seeded.live.generations.filter((r) => r.model !== '').length,
      no_surface: seeded.live.generations.filter((r) => (r.surface ?? '') === '').length,
    });
    expect(result.rows[0].no_model).toBeGreaterThan(0);
  });

  test('issue events: each name reads only its own rows of the shared table', async () => {
    for (const name of ['issue.created', 'issue.chat_sent']) {
      const result = await run({ from: name, measures: [{ as: 'n', agg: 'count' }, { as: 'people', agg: 'uniqExact', field: 'user_id' }], group_by: [{ bucket: 'day' }] });
      const rows = seeded.live.issues.filter((i) => i.name === name);
      expect(result.rows).toEqual([...groupRows(rows, (r) => dayText(r.ts))].map(([bucket, list]) => ({ bucket, n: list.length, people: uniq(list.map((r) => r.user_id)) })));
    }
  });
});

describe('tenant isolation', () => {
  test('another tenant with the same project id sees only its own rows', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }], group_by: [{ field: 'model' }] }, OTHER_TENANT, PROJECT);
    expect(result.rows).toEqual([{ model: 'foreign-model', calls: 30 }]);
  });

  test('the main tenant never sees another project or tenant', async () => {
    const result = await run({ from: 'tool.called', measures: [{ as: 'calls', agg: 'count' }], filters: [{ field: 'tool', op: 'eq', value: 'foreign-tool' }] });
    expect(result.rows).toEqual([{ calls: 0 }]);
    const other = await run({ from: 'tool.called', measures: [{ as: 'calls', agg: 'count' }] }, TENANT, OTHER_PROJECT);
    expect(other.rows).toEqual([{ calls: 30 }]);
  });
});
