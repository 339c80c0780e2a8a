import type { ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from '../app/app-deps.js';
import { HttpError } from '../platform/http/errors.js';
import { storeUnavailable } from '../platform/store-errors.js';
import { actorOf, projectForPrincipal } from '../app/route.js';
import { describeValidationError } from '../platform/http/validation.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import type { ProjectService } from '../workspace/projects/project-service.js';
import type { McpTool } from './mcp-tool.js';
import { VERSION } from '../platform/version.js';

/**
 * The MCP SDK side of the /mcp endpoint (mcp-router.ts): the SDK and the schema library under it
 * load with this module, on the first MCP request, so a process that serves none never loads them
 * and every start is that much shorter.
 */

function toolError(detail: string, code: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: detail }], structuredContent: { detail, code } };
}

/** An MCP server bound to one authenticated caller: built per request, since the endpoint is stateless. */
export function buildServer(deps: AppDeps, principal: Principal, tools: { tool: McpTool; validate: ValidateFunction }[], projects: ProjectService): Server {
  const server = new Server({ name: 'lookout', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ tool }) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      annotations: { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const entry = tools.find(({ tool }) => tool.name === request.params.name);
    if (!entry) return toolError(`Unknown tool: ${request.params.name}`, 'not_found');
    const args = structuredClone<Record<string, unknown>>(request.params.arguments ?? {});
    if (!entry.validate(args)) return toolError(describeValidationError('body', entry.validate.errors).replace(/^body: /, 'arguments: '), 'validation_error');
    try {
      const project = await projectForPrincipal(deps, principal, String(args.project_id));
      await projects.recordMcpUse(principal.tenantId, project);
      const payload = await entry.tool.run(args, { deps, principal, project, actor: actorOf(principal, 'mcp') });
      return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
    } catch (error) {
      if (error instanceof HttpError) return toolError(error.detail, error.code);
      const unavailable = storeUnavailable(error);
      if (unavailable) return toolError(unavailable.detail, unavailable.code);
      deps.logger.error({ err: error, tool: entry.tool.name }, 'mcp tool failed');
      return toolError('Internal server error', 'internal_error');
    }
  });
  return server;
}

/** A transport that answers one stateless request in JSON. */
export function statelessTransport(): StreamableHTTPServerTransport {
  return new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
}
