/**
 * MCP takes project_id in the body and spells end_exclusive, group_by and order_by as
 * endExclusive, groupBy and orderBy. This maps an MCP query_project_analytics argument
 * object (without project_id) to the REST body, so both surfaces go through the same validator and
 * answer the same detail strings. Other keys pass through untouched (and unknown ones are rejected
 * by the validator as usual).
 */
import { ValidationError } from '../../platform/http/errors.js';
import { MCP_KEY_RENAMES } from './query-shapes.js';


export function mcpArgumentsToQueryBody(args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const body: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const [camel, snake] of MCP_KEY_RENAMES) {
    if (!(camel in body)) continue;
    if (snake in body) throw new ValidationError(`${camel} and ${snake} are the same key; send one`);
    body[snake] = body[camel];
    delete body[camel];
  }
  return body;
}
