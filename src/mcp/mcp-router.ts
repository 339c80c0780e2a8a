import express, { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { authenticate, requireScope } from '../tenancy/auth.js';
import { compileBodySchema } from '../platform/http/validation.js';
import { ProjectService } from '../workspace/projects/project-service.js';
import { mcpTools } from './tools.js';

/** mcp-server.ts (the MCP SDK), imported once, on the first request that needs it. */
let sdk: Promise<typeof import('./mcp-server.js')> | null = null;
const mcpServer = () => (sdk ??= import('./mcp-server.js'));

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
    const { buildServer, statelessTransport } = await mcpServer();
    const server = buildServer(deps, principal, tools, projects);
    const transport = statelessTransport();
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
