import express, { Router, type Request, type Response } from 'express';
import type { ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from '../app/app-deps.js';
import { authenticate, requireScope } from '../tenancy/auth.js';
import { HttpError } from '../platform/http/errors.js';
import { storeUnavailable } from '../platform/store-errors.js';
import { actorOf, projectForPrincipal } from '../app/route.js';
import { compileBodySchema, describeValidationError } from '../platform/http/validation.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import { ProjectService } from '../workspace/projects/project-service.js';
import type { McpTool } from './mcp-tool.js';
import { mcpTools } from './tools.js';
import { VERSION } from '../platform/version.js';

function toolError(detail: string, code: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: detail }], structuredContent: { detail, code } };
}

/** An MCP server bound to one authenticated caller: built per request, since the endpoint is stateless. */
function buildServer(deps: AppDeps, principal: Principal, tools: { tool: McpTool; validate: ValidateFunction }[], projects: ProjectService): Server {
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

/**
 * The advertised input schema describes every nested key for the model's benefit, but only its top
 * level is checked here (required keys, no unknown keys, project_id a string): the nested values go to
 * the same service validator REST uses, so a bad argument yields the very detail text REST returns.
 */
function shallowSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, key === 'project_id' ? value : {}])),
  };
}

/**
 * Streamable HTTP MCP endpoint at /mcp, stateless: every POST carries the bearer key, is served by a
 * fresh server bound to that caller, and answers in JSON. Keys and scopes are those of REST (read or admin).
 */
export function mcpRouter(deps: AppDeps): Router {
  const router = Router();
  const tools = mcpTools().map((tool) => ({ tool, validate: compileBodySchema(shallowSchema(tool.inputSchema), {}) }));
  const projects = new ProjectService(deps);
  router.post('/mcp', express.json({ limit: deps.config.jsonBodyLimit }), async (req: Request, res: Response) => {
    const principal = await authenticate(deps.sql, req, deps.config.faults.keyCacheSeconds);
    requireScope(principal, 'read');
    const server = buildServer(deps, principal, tools, projects);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const notAllowed = (_req: Request, res: Response) => {
    res.status(405).set('Allow', 'POST').json({ detail: 'This MCP endpoint is stateless: use POST', code: 'method_not_allowed' });
  };
  router.get('/mcp', notAllowed);
  router.delete('/mcp', notAllowed);
  return router;
}
