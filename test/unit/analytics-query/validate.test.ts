/**
 * The validator: every row of the analytics error table (docs/analytics-query.md) with its exact detail, and the other
 * rules of the body table (unknown keys at every level, types, limits) with a detail naming the field.
 */
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../../src/analytics/catalog.js';
import { validateQuery } from '../../../src/analytics/query/validate.js';
import { ValidationError } from '../../../src/platform/http/errors.js';

const base = { from: 'generation.completed', start: '2026-11-01T00:00:00Z', end_exclusive: '2026-11-08T00:00:00Z', measures: [{ as: 'n', agg: 'count' }] };

function detailOf(body: unknown): string {
  try {
    validateQuery(body, LIMITS);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).status).toBe(400);
    expect((error as ValidationError).code).toBe('validation_error');
    return (error as ValidationError).detail;
  }
  throw new Error('expected a validation error');
}

const ok = (body: Record<string, unknown>) => validateQuery({ ...base, ...body }, LIMITS);

describe("the documented error table, verbatim", () => {
  test('Unknown field: <name> — field not on that event', () => {
    expect(detailOf({ ...base, measures: [{ as: 'x', agg: 'sum', field: 'agent_name_typo' }] })).toBe('Unknown field: agent_name_typo');
    // trace.processed has no queryable trace_id; generation.completed has no agent_name.
    expect(detailOf({ ...base, from: 'trace.processed', group_by: [{ field: 'trace_id' }] })).toBe('Unknown field: trace_id');
    expect(detailOf({ ...base, filters: [{ field: 'agent_name', op: 'eq', value: 'a' }] })).toBe('Unknown field: agent_name');
    expect(detailOf({ ...base, from: 'trace.processed', measures: [{ as: 'x', agg: 'sum', field: 'estimated_cost_basis' }] })).toBe('Unknown field: estimated_cost_basis');
  });

  test('<agg> is not valid for <name> — string field or aggs lacks it', () => {
    expect(detailOf({ ...base, measures: [{ as: 'x', agg: 'sum', field: 'model' }] })).toBe('sum is not valid for model');
    expect(detailOf({ ...base, from: 'trace.processed', measures: [{ as: 'x', agg: 'avg', field: 'total_tokens' }] })).toBe('avg is not valid for total_tokens');
    expect(detailOf({ ...base, from: 'tool.called', measures: [{ as: 'x', agg: 'p95', field: 'tool' }] })).toBe('p95 is not valid for tool');
  });

  test('count does not take a field', () => {
    expect(detailOf({ ...base, measures: [{ as: 'x', agg: 'count', field: 'duration_ms' }] })).toBe('count does not take a field');
  });

  test('<cost_measure> is not valid on <event>', () => {
    expect(detailOf({ ...base, measures: [{ agg: 'trace_cost' }] })).toBe('trace_cost is not valid on generation.completed');
    expect(detailOf({ ...base, from: 'tool.called', measures: [{ agg: 'generation_cost' }] })).toBe('generation_cost is not valid on tool.called');
  });

  test('Only one cost measure is allowed', () => {
    expect(detailOf({ ...base, from: 'trace.processed', measures: [{ as: 'a', agg: 'trace_cost' }, { as: 'b', agg: 'trace_cost' }] })).toBe('Only one cost measure is allowed');
  });

  test('generation_cost requires grouping by model', () => {
    expect(detailOf({ ...base, measures: [{ agg: 'generation_cost' }] })).toBe('generation_cost requires grouping by model');
    // A group on field model *with alias model*.
    expect(detailOf({ ...base, measures: [{ agg: 'generation_cost' }], group_by: [{ field: 'model', as: 'm' }] })).toBe('generation_cost requires grouping by model');
  });

  test('Invalid alias: <name>', () => {
    for (const alias of ['Upper', '1abc', '_x', 'a-b', 'a b', '', `a${'b'.repeat(41)}`, 'ünï', 'a;drop']) {
      expect(detailOf({ ...base, measures: [{ as: alias, agg: 'count' }] })).toBe(`Invalid alias: ${alias}`);
    }
    expect(detailOf({ ...base, group_by: [{ field: 'model', as: 'Model' }] })).toBe('Invalid alias: Model');
    // 1 letter plus 40 more is the longest alias.
    expect(() => ok({ measures: [{ as: `a${'b'.repeat(40)}`, agg: 'count' }] })).not.toThrow();
  });

  test('Duplicate alias: <name>', () => {
    expect(detailOf({ ...base, measures: [{ as: 'n', agg: 'count' }, { as: 'n', agg: 'sum', field: 'input_tokens' }] })).toBe('Duplicate alias: n');
    expect(detailOf({ ...base, group_by: [{ field: 'model' }], measures: [{ as: 'model', agg: 'count' }] })).toBe('Duplicate alias: model');
    expect(detailOf({ ...base, group_by: [{ bucket: 'day' }, { bucket: 'hour' }] })).toBe('Duplicate alias: bucket');
    const join = { from: 'tool.called', on: 'trace_id', measures: [{ as: 'n', agg: 'count' }] };
    expect(detailOf({ ...base, group_by: [{ field: 'trace_id' }], join })).toBe('Duplicate alias: n');
  });

  test('Unknown order field: <name> — unknown or joined alias', () => {
    expect(detailOf({ ...base, order_by: [{ measure: 'nope', direction: 'desc' }] })).toBe('Unknown order field: nope');
    const join = { from: 'tool.called', on: 'trace_id', measures: [{ as: 'calls', agg: 'count' }] };
    expect(detailOf({ ...base, group_by: [{ field: 'trace_id' }], join, order_by: [{ measure: 'calls', direction: 'asc' }] })).toBe('Unknown order field: calls');
  });

  test('start and endExclusive must be second-aligned UTC', () => {
    const detail = 'start and endExclusive must be second-aligned UTC';
    expect(detailOf({ ...base, start: '2026-11-01T00:00:00.123Z' })).toBe(detail);
    expect(detailOf({ ...base, end_exclusive: '2026-11-08T00:00:00.5Z' })).toBe(detail);
    expect(detailOf({ ...base, start: '2026-11-01T00:00:00+02:00' })).toBe(detail);
    expect(detailOf({ ...base, start: '2026-11-01T00:00:00' })).toBe(detail);
    // A zero fraction is second-aligned; +00:00 is UTC.
    expect(ok({ start: '2026-11-01T00:00:00.000Z', end_exclusive: '2026-11-08T00:00:00+00:00' }).window.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  test('Window exceeds 90 days', () => {
    expect(detailOf({ ...base, start: '2026-08-01T00:00:00Z', end_exclusive: '2026-10-30T00:00:01Z' })).toBe('Window exceeds 90 days');
    expect(() => ok({ start: '2026-08-01T00:00:00Z', end_exclusive: '2026-10-30T00:00:00Z' })).not.toThrow();
  });

  test('in filters accept at most 20 values', () => {
    const values = Array.from({ length: 21 }, (_, i) => `m${i}`);
    expect(detailOf({ ...base, filters: [{ field: 'model', op: 'in', value: values }] })).toBe('in filters accept at most 20 values');
    expect(detailOf({ ...base, measures: [{ as: 'n', agg: 'count', filter: { field: 'model', op: 'in', value: values } }] })).toBe('in filters accept at most 20 values');
    expect(() => ok({ filters: [{ field: 'model', op: 'in', value: values.slice(0, 20) }] })).not.toThrow();
  });

  test('Join must use a different event', () => {
    expect(detailOf({ ...base, group_by: [{ field: 'trace_id' }], join: { from: 'generation.completed', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }] } })).toBe('Join must use a different event');
  });
});

describe('other rules: 400 with a detail naming the field', () => {
  const cases: [string, unknown, string][] = [
    ['body not an object', [1], 'body: must be an object'],
    ['unknown top-level key', { ...base, having: 1 }, "body: unknown key 'having'"],
    ['camelCase key on REST', { ...base, endExclusive: base.end_exclusive }, "body: unknown key 'endExclusive'"],
    ['missing from', { ...base, from: undefined }, 'from is required'],
    ['missing measures', { ...base, measures: undefined }, 'measures is required'],
    ['unknown event', { ...base, from: 'trace.nope' }, 'from: unknown event trace.nope'],
    ['from not a string', { ...base, from: { $gt: '' } }, 'from: must be a string'],
    ['start not a date', { ...base, start: 'yesterday' }, 'start: must be an ISO 8601 UTC date-time'],
    ['start not a string', { ...base, start: 1767225600 }, 'start: must be a string'],
    ['impossible date', { ...base, start: '2026-02-30T00:00:00Z' }, 'start: not a valid date-time'],
    ['end before start', { ...base, end_exclusive: '2026-11-01T00:00:00Z' }, 'end_exclusive: must be after start'],
    ['empty measures', { ...base, measures: [] }, 'measures: must have at least 1 entry'],
    ['too many measures', { ...base, measures: Array.from({ length: 13 }, (_, i) => ({ as: `m${i}`, agg: 'count' })) }, 'measures: must have at most 12 entries'],
    ['unknown measure key', { ...base, measures: [{ as: 'n', agg: 'count', alias: 'x' }] }, "measures.0: unknown key 'alias'"],
    ['measure not an object', { ...base, measures: ['count'] }, 'measures.0: must be an object'],
    ['unknown agg', { ...base, measures: [{ as: 'n', agg: 'median', field: 'duration_ms' }] }, 'measures.0.agg: must be one of'],
    ['missing as', { ...base, measures: [{ agg: 'count' }] }, 'measures.0.as is required'],
    ['alias not a string', { ...base, measures: [{ as: ['n'], agg: 'count' }] }, 'measures.0.as: must be a string'],
    ['sum without field', { ...base, measures: [{ as: 'n', agg: 'sum' }] }, 'measures.0.field is required for sum'],
    ['field not a string', { ...base, measures: [{ as: 'n', agg: 'sum', field: { toString: 'x' } }] }, 'measures.0.field: must be a string'],
    ['cost measure with field', { ...base, measures: [{ agg: 'generation_cost', field: 'model' }], group_by: [{ field: 'model' }] }, 'measures.0.field: generation_cost does not take a field'],
    ['cost measure with filter', { ...base, from: 'trace.processed', measures: [{ agg: 'trace_cost', filter: { field: 'agent_name', op: 'eq', value: 'a' } }] }, 'measures.0.filter: trace_cost does not take a filter'],
    ['alias shadowing a cost row field', { ...base, measures: [{ agg: 'generation_cost' }, { as: 'priced', agg: 'count' }], group_by: [{ field: 'model' }] }, 'Duplicate alias: priced'],
    ['unknown filter key', { ...base, filters: [{ field: 'model', op: 'eq', value: 'a', not: true }] }, "filters.0: unknown key 'not'"],
    ['unknown op', { ...base, filters: [{ field: 'model', op: 'like', value: 'a%' }] }, 'filters.0.op: must be one of'],
    ['eq without value', { ...base, filters: [{ field: 'model', op: 'eq' }] }, 'filters.0.value is required'],
    ['number for a string field', { ...base, filters: [{ field: 'model', op: 'eq', value: 5 }] }, 'filters.0.value: must be a string for model'],
    ['string for a number field', { ...base, filters: [{ field: 'duration_ms', op: 'gt', value: '5' }] }, 'filters.0.value: must be a finite number for duration_ms'],
    ['object value', { ...base, filters: [{ field: 'model', op: 'eq', value: { $ne: null } }] }, 'filters.0.value: must be a string for model'],
    ['empty in', { ...base, filters: [{ field: 'model', op: 'in', value: [] }] }, 'filters.0.value: in needs a non-empty array'],
    ['in with a scalar', { ...base, filters: [{ field: 'model', op: 'in', value: 'a' }] }, 'filters.0.value: in needs a non-empty array'],
    ['in with a wrong element', { ...base, filters: [{ field: 'model', op: 'in', value: ['a', 1] }] }, 'filters.0.value.1: must be a string for model'],
    ['is_null with a value', { ...base, filters: [{ field: 'tps', op: 'is_null', value: 1 }] }, 'filters.0.value: is_null takes no value'],
    ['too many filters', { ...base, filters: Array.from({ length: 13 }, () => ({ field: 'model', op: 'eq', value: 'a' })) }, 'filters: must have at most 12 entries'],
    ['filters not an array', { ...base, filters: { field: 'model' } }, 'filters: must be an array'],
    ['group with both', { ...base, group_by: [{ field: 'model', bucket: 'day' }] }, 'group_by.0: needs exactly one of bucket or field'],
    ['unknown bucket', { ...base, group_by: [{ bucket: 'year' }] }, 'group_by.0.bucket: must be one of minute, hour, day, week, month'],
    ['too many groups', { ...base, group_by: ['model', 'trace_id', 'span_id', 'actor', 'surface'].map((field) => ({ field })) }, 'group_by: must have at most 4 entries'],
    ['unknown group key', { ...base, group_by: [{ field: 'model', having: 1 }] }, "group_by.0: unknown key 'having'"],
    ['order direction', { ...base, order_by: [{ measure: 'n', direction: 'up' }] }, 'order_by.0.direction: must be one of asc, desc'],
    ['unknown order key', { ...base, order_by: [{ measure: 'n', nulls: 'first' }] }, "order_by.0: unknown key 'nulls'"],
    ['too many order entries', { ...base, order_by: Array.from({ length: 5 }, () => ({ measure: 'n' })) }, 'order_by: must have at most 4 entries'],
    ['limit zero', { ...base, limit: 0 }, 'limit: must be an integer from 1 to 10000'],
    ['limit too large', { ...base, limit: 10001 }, 'limit: must be an integer from 1 to 10000'],
    ['limit fractional', { ...base, limit: 1.5 }, 'limit: must be an integer from 1 to 10000'],
    ['limit as text', { ...base, limit: '10' }, 'limit: must be an integer from 1 to 10000'],
    ['unknown join key', { ...base, group_by: [{ field: 'trace_id' }], join: { from: 'tool.called', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }], group_by: [] } }, "join: unknown key 'group_by'"],
    ['join on a field missing from the joined event', { ...base, from: 'tool.called', group_by: [{ field: 'tool' }], join: { from: 'span.errored', on: 'tool', measures: [{ as: 'j', agg: 'count' }] } }, 'Unknown field: tool'],
    ['join without the on group', { ...base, join: { from: 'tool.called', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }] } }, 'join.on: the query must group by trace_id with alias trace_id'],
    ['join on group with another alias', { ...base, group_by: [{ field: 'trace_id', as: 't' }], join: { from: 'tool.called', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }] } }, 'join.on: the query must group by trace_id with alias trace_id'],
    ['cost measure in a join', { ...base, from: 'tool.called', group_by: [{ field: 'trace_id' }], join: { from: 'generation.completed', on: 'trace_id', measures: [{ agg: 'generation_cost' }] } }, 'join.measures.0: cost measures are not allowed in a join'],
    ['join without measures', { ...base, group_by: [{ field: 'trace_id' }], join: { from: 'tool.called', on: 'trace_id', measures: [] } }, 'join.measures: must have at least 1 entry'],
    ['join filter unknown key', { ...base, group_by: [{ field: 'trace_id' }], join: { from: 'tool.called', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }], filters: [{ field: 'tool', op: 'eq', value: 'a', x: 1 }] } }, "join.filters.0: unknown key 'x'"],
    ['join filter field of the primary only', { ...base, group_by: [{ field: 'trace_id' }], join: { from: 'tool.called', on: 'trace_id', measures: [{ as: 'j', agg: 'count' }], filters: [{ field: 'model', op: 'eq', value: 'a' }] } }, 'Unknown field: model'],
    ['cost alias not orderable', { ...base, from: 'trace.processed', measures: [{ as: 'cost', agg: 'trace_cost' }], order_by: [{ measure: 'cost' }] }, 'Unknown order field: cost'],
  ];
  test.each(cases)('%s', (_name, body, detail) => {
    expect(detailOf(body)).toContain(detail);
  });
});

describe('accepted shapes', () => {
  test('defaults: bucket alias, field alias, limit, direction', () => {
    const q = ok({ group_by: [{ bucket: 'week' }, { field: 'model' }], order_by: [{ measure: 'n' }] });
    expect(q.groups.map((g) => g.alias)).toEqual(['bucket', 'model']);
    expect(q.limit).toBe(LIMITS.max_rows);
    expect(q.orderBy).toEqual([{ alias: 'n', direction: 'asc' }]);
  });

  test('every documented event is queryable with count', () => {
    for (const from of ['trace.processed', 'generation.completed', 'tool.called', 'span.errored', 'issue.created', 'issue.resolved', 'issue.dismissed', 'issue.reopened', 'issue.review_started', 'issue.flagged', 'issue.unflagged', 'issue.chat_sent']) {
      expect(ok({ from }).event.name).toBe(from);
    }
  });

  test('uniqExact takes any field, string or number', () => {
    expect(() => ok({ measures: [{ as: 'a', agg: 'uniqExact', field: 'model' }, { as: 'b', agg: 'uniqExact', field: 'duration_ms' }] })).not.toThrow();
    expect(() => ok({ from: 'trace.processed', measures: [{ as: 'a', agg: 'uniqExact', field: 'total_tokens' }] })).not.toThrow();
  });

  test('is_null accepts an explicit null value; cost measures need no alias', () => {
    expect(ok({ filters: [{ field: 'tps', op: 'is_null', value: null }] }).filters[0].values).toEqual([]);
    expect(ok({ from: 'trace.processed', measures: [{ agg: 'trace_cost' }] }).cost).toEqual({ kind: 'cost', agg: 'trace_cost', alias: null });
  });
});

describe('MCP argument shape', async () => {
  const { mcpArgumentsToQueryBody } = await import('../../../src/analytics/query/mcp-body.js');
  test('endExclusive, groupBy, orderBy map to the REST keys and validate the same way', () => {
    const args = { from: 'generation.completed', start: base.start, endExclusive: base.end_exclusive, measures: [{ as: 'n', agg: 'count' }], groupBy: [{ field: 'model' }], orderBy: [{ measure: 'n', direction: 'desc' }] };
    const q = validateQuery(mcpArgumentsToQueryBody(args), LIMITS);
    expect(q.groups.map((g) => g.alias)).toEqual(['model']);
    expect(q.orderBy).toEqual([{ alias: 'n', direction: 'desc' }]);
    expect(detailOf(mcpArgumentsToQueryBody({ ...args, start: '2026-11-01T00:00:00.5Z' }))).toBe('start and endExclusive must be second-aligned UTC');
    expect(() => mcpArgumentsToQueryBody({ ...args, end_exclusive: base.end_exclusive })).toThrow(ValidationError);
  });
});
