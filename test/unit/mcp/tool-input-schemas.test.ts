/**
 * One source per shape, MCP included: every tool argument but `project_id` is the very schema
 * object the REST route declares for that parameter (a query parameter of the OpenAPI document, or
 * a property of a request body), so a bound, an enum or a description changed there changes the
 * tool too. The argument lists are the ones docs/mcp.md gives.
 */
import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { mcpTools } from '../../../src/mcp/tools.js';
import { buildOpenApiDocument } from '../../helpers/openapi-document.js';

interface Operation {
  parameters?: { in: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

type Schema = { properties?: Record<string, unknown>; $ref?: string };

/** Every schema object the document declares for a query parameter or a request body's property (a body may be a component). */
function restArgumentSchemas(): Set<unknown> {
  const found = new Set<unknown>();
  const openapi = buildOpenApiDocument();
  const resolve = (schema: Schema) => (schema.$ref ? (openapi.schemas[schema.$ref.split('/').pop()!] as Schema) : schema);
  const paths = openapi.toJSON().paths as Record<string, Record<string, Operation>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'query') found.add(parameter.schema);
      for (const body of Object.values(operation.requestBody?.content ?? {})) for (const schema of Object.values(resolve(body.schema).properties ?? {})) found.add(schema);
    }
  }
  return found;
}

const inputOf = (name: string) => {
  const tool = mcpTools().find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.inputSchema as { type: string; additionalProperties: boolean; required: string[]; properties: Record<string, unknown> };
};

const WINDOW = { arguments: ['project_id', 'start', 'endExclusive', 'granularity'], required: ['project_id', 'start', 'endExclusive'] };

/** Tool → its arguments and the required ones, in the order the tool lists them. */
const EXPECTED: Record<string, { arguments: string[]; required: string[] }> = {
  describe_project_analytics: { arguments: ['project_id'], required: ['project_id'] },
  query_project_analytics: {
    arguments: ['project_id', 'from', 'start', 'endExclusive', 'measures', 'filters', 'groupBy', 'orderBy', 'limit', 'join'],
    required: ['project_id', 'from', 'start', 'endExclusive', 'measures'],
  },
  get_project_analytics_window: WINDOW,
  get_project_analytics_base: WINDOW,
  get_project_agent_scorecard: WINDOW,
  get_project_tool_aggregates: WINDOW,
  get_project_model_scorecard: { arguments: ['project_id', 'start', 'end', 'endExclusive'], required: ['project_id', 'start'] },
  get_project_roi: { arguments: ['project_id', 'granularity'], required: ['project_id'] },
  search_traces: {
    arguments: [
      'project_id', 'agent_name', 'has_error', 'thread_id', 'start', 'end', 'model', 'tool', 'release', 'min_duration_ms', 'max_duration_ms',
      'min_cost_usd', 'max_cost_usd', 'include_total', 'cursor', 'limit', 'q',
    ],
    required: ['project_id', 'q'],
  },
};

describe('MCP tool input schemas', () => {
  it('take every argument but project_id as the REST route declares it: the same schema object', () => {
    const rest = restArgumentSchemas();
    const own = mcpTools().flatMap((tool) =>
      Object.entries((tool.inputSchema as { properties: Record<string, unknown> }).properties)
        .filter(([key, schema]) => key !== 'project_id' && !rest.has(schema))
        .map(([key]) => `${tool.name}.${key}`),
    );
    expect(own).toEqual([]);
    // The check can fail: an equal schema written out again is another object.
    expect(rest.has(Type.String())).toBe(false);
  });

  it('list the documented arguments, closed to others, project_id always required', () => {
    expect(mcpTools().map((t) => t.name).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [name, expected] of Object.entries(EXPECTED)) {
      const input = inputOf(name);
      expect({ type: input.type, additionalProperties: input.additionalProperties }, name).toEqual({ type: 'object', additionalProperties: false });
      expect({ arguments: Object.keys(input.properties), required: input.required }, name).toEqual(expected);
    }
  });

  it('describe the view windows and buckets in REST\'s words (ISO 8601 at a whole second; day, week, month)', () => {
    const window = inputOf('get_project_analytics_window').properties;
    expect(window.start).toMatchObject({ type: 'string', description: expect.stringContaining('whole second') });
    expect(window.granularity).toMatchObject({ type: 'string', enum: ['day', 'week', 'month'] });
    // The JSON a client receives carries no TypeBox marks.
    expect(JSON.parse(JSON.stringify(window.granularity))).toEqual({ type: 'string', enum: ['day', 'week', 'month'], description: expect.any(String) });
  });
});
