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

export const projectIdArgument = {
  type: 'string',
  description: 'Id of the Lookout project to read (GET /api/projects lists them).',
};
