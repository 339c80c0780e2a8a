/**
 * Joins (each documented pair), order_by, limit and truncated, and the cost measures' row shape,
 * on the embedded ClickHouse against references computed from the seeded rows.
 */
import { describe, expect, test } from 'vitest';
import { useSeededQueryStore } from './seeded-store.js';
import { dayText, groupRows, hourText, sum, uniq } from './dataset.js';

const seeded = useSeededQueryStore();
const { run } = seeded;

describe('join', () => {
  test('trace.processed with tool.called on agent_name; joined filters apply only to the joined event', async () => {
    const result = await run({
      from: 'trace.processed',
      measures: [{ as: 'traces', agg: 'count' }, { as: 'errors', agg: 'sum', field: 'error_count' }],
      group_by: [{ field: 'agent_name' }],
      join: {
        from: 'tool.called',
        on: 'agent_name',
        filters: [{ field: 'error', op: 'eq', value: 1 }],
        measures: [{ as: 'failed_calls', agg: 'count' }, { as: 'failing_tools', agg: 'uniqExact', field: 'tool' }],
      },
    });
    const failedCalls = groupRows(seeded.live.tools.filter((t) => t.error === 1), (t) => t.agent_name);
    const expected = [...groupRows(seeded.live.traces, (t) => t.agent_name)].map(([agent_name, rows]) => {
      const calls = failedCalls.get(agent_name);
      return {
        agent_name,
        traces: rows.length,
        errors: sum(rows.map((r) => r.error_count)),
        failed_calls: calls ? calls.length : null,
        failing_tools: calls ? uniq(calls.map((c) => c.tool)) : null,
      };
    });
    expect(result.rows).toEqual(expected);
    // tool-only-agent has calls but no traces: a left join keeps only primary rows.
    expect(result.rows.map((r) => r.agent_name)).not.toContain('tool-only-agent');
  });

  test('tool.called with generation.completed on trace_id: unmatched rows get null joined measures', async () => {
    const result = await run({
      from: 'tool.called',
      measures: [{ as: 'calls', agg: 'count' }, { as: 'tool_errors', agg: 'sum', field: 'error' }],
      group_by: [{ field: 'trace_id' }],
      join: {
        from: 'generation.completed',
        on: 'trace_id',
        measures: [
          { as: 'generations', agg: 'count' },
          { as: 'output_tokens', agg: 'sum', field: 'output_tokens' },
          { as: 'failed_generations', agg: 'count', filter: { field: 'error', op: 'eq', value: 1 } },
        ],
      },
    });
    const generations = groupRows(seeded.live.generations, (g) => g.trace_id);
    const expected = [...groupRows(seeded.live.tools, (t) => t.trace_id)].map(([trace_id, rows]) => {
      const gens = generations.get(trace_id);
      return {
        trace_id,
        calls: rows.length,
        tool_errors: sum(rows.map((r) => r.error)),
        generations: gens ? gens.length : null,
        output_tokens: gens ? sum(gens.map((g) => g.output_tokens)) : null,
        failed_generations: gens ? gens.filter((g) => g.error === 1).length : null,
      };
    });
    expect(result.rows).toEqual(expected);
    expect(result.rows.some((r) => r.generations === null)).toBe(true);
  });

  test('tool.called with span.errored on trace_id', async () => {
    const result = await run({
      from: 'tool.called',
      measures: [{ as: 'calls', agg: 'count' }],
      group_by: [{ field: 'trace_id' }],
      join: { from: 'span.errored', on: 'trace_id', filters: [{ field: 'span_name', op: 'neq', value: 'root' }], measures: [{ as: 'span_errors', agg: 'count' }, { as: 'kinds', agg: 'uniqExact', field: 'span_name' }] },
    });
    const errors = groupRows(seeded.live.spanErrors.filter((e) => e.span_name !== 'root'), (e) => e.trace_id);
    const expected = [...groupRows(seeded.live.tools, (t) => t.trace_id)].map(([trace_id, rows]) => {
      const e = errors.get(trace_id);
      return { trace_id, calls: rows.length, span_errors: e ? e.length : null, kinds: e ? uniq(e.map((x) => x.span_name)) : null };
    });
    expect(result.rows).toEqual(expected);
  });

  test('a join with a bucket group, ordered by a primary measure and limited', async () => {
    const result = await run({
      from: 'tool.called',
      measures: [{ as: 'calls', agg: 'count' }],
      group_by: [{ bucket: 'day' }, { field: 'trace_id' }],
      join: { from: 'generation.completed', on: 'trace_id', measures: [{ as: 'generations', agg: 'count' }] },
      order_by: [{ measure: 'calls', direction: 'desc' }],
      limit: 7,
    });
    const generations = groupRows(seeded.live.generations, (g) => g.trace_id);
    const all = [...groupRows(seeded.live.tools, (t) => `${dayText(t.ts)}|${t.trace_id}`)].map(([key, rows]) => {
      const [bucket, trace_id] = key.split('|');
      return { bucket, trace_id, calls: rows.length, generations: generations.get(trace_id)?.length ?? null };
    });
    all.sort((a, b) => b.calls - a.calls || (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0) || (a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0));
    expect(result.rows).toEqual(all.slice(0, 7));
    expect(result.truncated).toBe(true);
  });
});

describe('order_by, limit and truncated', () => {
  const body = { from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }], group_by: [{ field: 'trace_id' }] };
  const byTrace = () => [...groupRows(seeded.live.generations, (g) => g.trace_id)].map(([trace_id, rows]) => ({ trace_id, calls: rows.length }));

  test('ordered by a measure desc, ties broken by the groups, limited: truncated', async () => {
    const result = await run({ ...body, order_by: [{ measure: 'calls', direction: 'desc' }], limit: 5 });
    const expected = byTrace().sort((a, b) => b.calls - a.calls || (a.trace_id < b.trace_id ? -1 : 1)).slice(0, 5);
    expect(result.rows).toEqual(expected);
    expect(result.truncated).toBe(true);
  });

  test('ordered by a group alias desc', async () => {
    const result = await run({ ...body, order_by: [{ measure: 'trace_id', direction: 'desc' }] });
    expect(result.rows).toEqual(byTrace().reverse());
    expect(result.truncated).toBe(false);
  });

  test('truncated is true when the row count reaches the limit, false below it', async () => {
    const groups = byTrace().length;
    expect((await run({ ...body, limit: groups })).truncated).toBe(true);
    const above = await run({ ...body, limit: groups + 1 });
    expect(above.rows).toHaveLength(groups);
    expect(above.truncated).toBe(false);
  });

  test('several groups with custom aliases keep the request order of keys', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [{ as: 'calls', agg: 'count' }],
      group_by: [{ field: 'model', as: 'm' }, { bucket: 'hour', as: 'h' }],
      filters: [{ field: 'model', op: 'eq', value: 'gpt-4o' }],
      limit: 3,
    });
    const expected = [...groupRows(seeded.live.generations.filter((g) => g.model === 'gpt-4o'), (g) => hourText(g.ts))].slice(0, 3).map(([h, rows]) => ({ m: 'gpt-4o', h, calls: rows.length }));
    expect(result.rows).toEqual(expected);
    expect(Object.keys(result.rows[0])).toEqual(['m', 'h', 'calls']);
  });
});

describe('cost measures', () => {
  test('generation_cost adds its cost row fields, not its alias, to each model row', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'cost', agg: 'generation_cost' }, { as: 'calls', agg: 'count' }], group_by: [{ field: 'model' }] });
    expect(result.rows.map((r) => r.model)).toEqual([...groupRows(seeded.live.generations, (g) => g.model)].map(([m]) => m));
    for (const row of result.rows) {
      expect(row).not.toHaveProperty('cost');
      expect(Object.keys(row)).toEqual(expect.arrayContaining(['model', 'calls', 'estimated_cost_usd', 'priced']));
      expect(typeof row.priced).toBe('boolean');
      expect(row.estimated_cost_usd === null || typeof row.estimated_cost_usd === 'number').toBe(true);
    }
  });

  test('trace_cost adds the trace cost row (documented field list) to each row', async () => {
    const result = await run({ from: 'trace.processed', measures: [{ agg: 'trace_cost' }, { as: 'traces', agg: 'count' }], group_by: [{ bucket: 'day' }] });
    expect(result.rows.length).toBeGreaterThan(0);
    for (const row of result.rows) {
      for (const key of ['estimated_cost_usd', 'priced_tokens', 'total_tokens', 'priced_token_share', 'unpriced_models', 'pricing_fetched_at', 'cost_source', 'cost_lower_bound', 'cost_lower_bound_reasons', 'model_breakdown_truncated', 'attribution']) {
        expect(row).toHaveProperty(key);
      }
      expect(['stored', 'mixed', 'query_time']).toContain(row.cost_source);
      expect(Array.isArray(row.cost_lower_bound_reasons)).toBe(true);
      expect(['all', 'unwritten_only', 'none']).toContain((row.attribution as { coverage: string }).coverage);
    }
    expect(result.rows.map((r) => r.bucket)).toEqual([...groupRows(seeded.live.traces, (t) => dayText(t.ts))].map(([d]) => d));
  });

  test('trace_cost without groups answers one row', async () => {
    const result = await run({ from: 'trace.processed', measures: [{ as: 'c', agg: 'trace_cost' }] });
    expect(result.rows).toHaveLength(1);
    expect(result.rows[0]).toHaveProperty('cost_lower_bound');
  });
});

describe('cost rows meet their groups', () => {
  test('generation_cost finds its row for string, bucket and integer groups', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [{ agg: 'generation_cost' }, { as: 'calls', agg: 'count' }],
      group_by: [{ field: 'model' }, { bucket: 'day' }, { field: 'error' }],
      filters: [{ field: 'model', op: 'eq', value: 'gpt-4o' }],
    });
    expect(result.rows.length).toBeGreaterThan(0);
    // gpt-4o has a list price, so a matched cost row carries a figure; the fallback would be null.
    for (const row of result.rows) expect(row).toMatchObject({ model: 'gpt-4o', priced: true, estimated_cost_usd: expect.any(Number) });
  });
});
