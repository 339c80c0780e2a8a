import type { Request, Response, Router } from 'express';
import type { ValidateFunction } from 'ajv';
import type { AppDeps } from './app-deps.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import { findProject, type Project } from '../tenancy/project-store.js';
import { authenticate, requireScope, type ScopeNeed } from '../tenancy/auth.js';
import { ForbiddenError, NotFoundError } from '../platform/http/errors.js';
import { errorResponse, type DeclaredSchema, type JsonSchema } from '../platform/http/openapi.js';
import { assertStorableStrings, assertValid, compileBodySchema, compileQuerySchema } from '../platform/http/validation.js';
import type { Origin } from '../spans/origin.js';

// The body and query reach a handler only after ajv validated them against the route's own JSON
// schemas; a route names their TypeScript shape through these parameters, and a route that reads
// neither leaves them open.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: validated by the route's schema
export interface RouteContext<Body = any, Query = any> {
  principal: Principal;
  tenantId: string;
  params: Record<string, string>;
  query: Query;
  body: Body;
  /** The project named by the route's `{project_id}` path parameter, already checked against tenant and key. */
  project: Project;
  actor: Origin;
  req: Request;
  res: Response;
  deps: AppDeps;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- validated by the route's schema (RouteContext)
export interface RouteSpec<Body = any, Query = any> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path relative to /api, e.g. `/projects/{project_id}`. */
  path: string;
  summary: string;
  tag: string;
  scope: ScopeNeed;
  /** When true, `{project_id}` in the path is loaded and checked (404 for foreign or out-of-key projects). */
  projectParam?: boolean;
  /** Tenant-level resources (users): a project-limited key gets 403. */
  tenantWide?: boolean;
  body?: DeclaredSchema;
  query?: DeclaredSchema;
  /** Success responses for the OpenAPI document: status → {description, schema?}. */
  responses?: Record<string, { description: string; schema?: DeclaredSchema }>;
  handler: (ctx: RouteContext<Body, Query>) => Promise<unknown>;
}

function isRouteResult(value: unknown): value is RouteResult {
  return typeof value === 'object' && value !== null && ('status' in value || 'body' in value) && Object.keys(value).every((k) => k === 'status' || k === 'body' || k === 'headers');
}

/** Loads a project for a principal: another tenant's project, or one outside a project-limited key, is a 404 like an unknown id. */
export async function projectForPrincipal(deps: AppDeps, principal: Principal, projectId: string): Promise<Project> {
  // Ids are UUIDs, matched in any letter case (as PostgreSQL's uuid does); callers then use `project.id`.
  if (principal.projectId && principal.projectId !== projectId.toLowerCase()) throw new NotFoundError('Project not found');
  const project = await findProject(deps.sql, principal.tenantId, projectId);
  if (!project) throw new NotFoundError('Project not found');
  return project;
}

export function actorOf(principal: Principal, surface: 'api' | 'mcp'): Origin {
  return {
    actor: principal.userId ? 'user' : 'api_key',
    surface,
    user_id: principal.userId ?? '',
    api_key_id: principal.keyId,
  };
}

function queryParameters(declared: DeclaredSchema | undefined): unknown[] {
  const schema = declared as JsonSchema | undefined;
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

/**
 * Registers one endpoint: the OpenAPI operation, then an Express handler that authenticates the
 * bearer key, checks scope and project access, validates query and body with ajv schemas taken from
 * the same document, runs the handler and writes its result. Errors go to the error middleware.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- validated by the route's schema (RouteContext)
export function defineRoute<Body = any, Query = any>(router: Router, deps: AppDeps, spec: RouteSpec<Body, Query>): void {
  const pathParams = [...spec.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(spec.responses ?? { 200: { description: 'OK' } })) {
    responses[status] = response.schema
      ? { description: response.description, content: { 'application/json': { schema: response.schema } } }
      : { description: response.description };
  }
  responses['4XX'] = errorResponse;
  deps.openapi.addOperation(spec.path, spec.method, {
    summary: spec.summary,
    tags: [spec.tag],
    parameters: [
      ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...queryParameters(spec.query),
    ],
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } } : {}),
    responses,
  });

  const validateBody: ValidateFunction | null = spec.body ? compileBodySchema(spec.body as JsonSchema, deps.openapi.schemas) : null;
  const validateQuery: ValidateFunction | null = spec.query ? compileQuerySchema(spec.query as JsonSchema) : null;
  const expressPath = spec.path.replace(/\{([a-z_]+)\}/g, ':$1');

  const method = spec.method.toUpperCase();
  router[spec.method](expressPath, async (req: Request, res: Response) => {
    // Timed to the answer, errors included; labelled by the route's template, never by its values.
    const started = performance.now();
    res.once('finish', () => {
      deps.metrics.httpDuration.observe({ route: spec.path, method, status_class: `${Math.floor(res.statusCode / 100)}xx` }, (performance.now() - started) / 1000);
    });
    const principal = await authenticate(deps.sql, req, deps.config.faults.keyCacheSeconds);
    requireScope(principal, spec.scope);
    if (spec.tenantWide && principal.projectId) throw new ForbiddenError('A project-limited key cannot manage tenant-wide resources');
    const params = req.params as Record<string, string>;
    const project = spec.projectParam ? await projectForPrincipal(deps, principal, params.project_id) : (undefined as unknown as Project);
    const query = { ...(req.query as Record<string, unknown>) };
    if (validateQuery) assertValid(validateQuery, query, 'query');
    assertStorableStrings(query, 'query');
    const body: unknown = req.body;
    if (validateBody) {
      assertValid(validateBody, body, 'body');
      assertStorableStrings(body, 'body');
    }
    const result = await spec.handler({
      principal,
      tenantId: principal.tenantId,
      params,
      query: query as Query,
      body: body as Body,
      project,
      actor: actorOf(principal, 'api'),
      req,
      res,
      deps,
    });
    if (res.headersSent) return;
    const { status, body: payload, headers } = isRouteResult(result) ? result : { status: 200, body: result, headers: undefined };
    if (headers) res.set(headers);
    if (payload === undefined) res.status(status ?? 204).end();
    else res.status(status ?? 200).json(payload);
  });
}
