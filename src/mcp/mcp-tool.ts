import { Type, type TObject, type TProperties } from 'typebox';
import type { AppDeps } from '../app/app-deps.js';
import type { JsonSchema } from '../platform/http/openapi.js';
import type { Project } from '../tenancy/project-store.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import type { Origin } from '../spans/origin.js';

export interface McpToolContext {
  deps: AppDeps;
  principal: Principal;
  /** The project named by the tool's `project_id` argument, already checked against tenant and key. */
  project: Project;
  /** surface `mcp`: events recorded through a tool say so. */
  actor: Origin;
}

/**
 * One MCP tool: a thin adapter over the same service a REST route calls. Its input is a JSON schema
 * (validated by ajv before `run`), and it returns the REST payload, which becomes the structured content.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  // Arguments arrive validated by ajv against inputSchema; each tool reads them as its schema says.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- validated against inputSchema before run
  run(args: Record<string, any>, ctx: McpToolContext): Promise<Record<string, unknown>>;
}

/** The one argument every tool takes; REST has it in the path, so no REST shape declares it. */
export const projectIdArgument = Type.String({ description: 'Id of the Lookout project to read (GET /api/projects lists them).' });

/**
 * A tool's input schema: `project_id` and the named properties of the shape its REST route
 * validates with, each the very schema object REST declares (type, enum, bounds, description), so
 * one source serves both surfaces. `required` names the keys the tool needs besides project_id; a
 * tool whose route takes no parameters passes no shape.
 */
export function toolInputSchema<P extends TProperties>(
  shape: TObject<P> | null,
  keys: readonly (keyof P & string)[] = [],
  required: readonly (keyof P & string)[] = [],
): JsonSchema {
  const properties = shape ? Object.fromEntries(keys.map((key) => [key, shape.properties[key]])) : {};
  return { type: 'object', additionalProperties: false, required: ['project_id', ...required], properties: { project_id: projectIdArgument, ...properties } };
}
