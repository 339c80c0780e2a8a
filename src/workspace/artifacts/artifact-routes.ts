import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { ArtifactService } from './artifact-service.js';

/** A file may be large (a whole understanding document) but stays under the JSON body limit. */
const FILE_MAX = 500_000;

const identitySchema = {
  type: 'object',
  required: ['artifact_version_id', 'version', 'agent_name', 'created_at', 'updated_at'],
  properties: {
    artifact_version_id: { type: 'string', format: 'uuid' },
    version: { type: 'integer', minimum: 1 },
    agent_name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** {agent_name, understanding?, expectations?, based_on_version?}. */
const versionInput = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_name'],
  properties: {
    agent_name: { type: 'string', minLength: 1, maxLength: 200 },
    understanding: { type: 'string', maxLength: FILE_MAX },
    expectations: { type: 'string', maxLength: FILE_MAX },
    based_on_version: { type: ['integer', 'null'], minimum: 0 },
  },
};

interface VersionBody {
  agent_name: string;
  understanding?: string;
  expectations?: string;
  based_on_version?: number | null;
}

function agentNameOf(raw: string): string {
  const name = raw.trim();
  if (!name) throw new ValidationError('agent_name: must not be blank');
  return name;
}

export function artifactRoutes(deps: AppDeps): Router {
  const router = Router();
  const artifacts = new ArtifactService(deps);
  const Identity = deps.openapi.addSchema('AgentUnderstandingVersion', identitySchema);
  const Full = deps.openapi.addSchema('AgentUnderstandingVersionFiles', {
    allOf: [Identity, { type: 'object', required: ['understanding', 'expectations'], properties: { understanding: { type: 'string' }, expectations: { type: 'string' } } }],
  });
  const Input = deps.openapi.addSchema('AgentUnderstandingVersionInput', versionInput);

  defineRoute<VersionBody>(router, deps, {
    method: 'post', path: '/projects/{project_id}/artifacts/versions', tag: 'artifacts', scope: 'admin', projectParam: true,
    summary: 'Record the next agent understanding version (append-only; an omitted file is carried forward)',
    body: Input,
    responses: { 201: { description: 'The new version (identity only)', schema: Identity } },
    handler: async ({ tenantId, project, body, principal }) => {
      const agentName = agentNameOf(body.agent_name);
      const version = await artifacts.record(tenantId, project.id, {
        agentName,
        understanding: body.understanding,
        expectations: body.expectations,
        basedOnVersion: body.based_on_version,
        createdBy: principal.userId ?? principal.keyId,
      });
      return { status: 201, body: version };
    },
  });

  defineRoute<unknown, { agent_name?: string }>(router, deps, {
    method: 'get', path: '/projects/{project_id}/artifacts/versions', tag: 'artifacts', scope: 'read', projectParam: true,
    summary: 'List agent understanding versions, by agent name and newest version first',
    query: { type: 'object', additionalProperties: false, properties: { agent_name: { type: 'string', minLength: 1, maxLength: 200 } } },
    responses: { 200: { description: 'Versions', schema: { type: 'object', required: ['versions'], properties: { versions: { type: 'array', items: Identity } } } } },
    handler: async ({ tenantId, project, query }) => ({
      versions: await artifacts.list(tenantId, project.id, query.agent_name === undefined ? null : agentNameOf(query.agent_name)),
    }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/artifacts/versions/{version_id}', tag: 'artifacts', scope: 'read', projectParam: true,
    summary: 'Read one agent understanding version with its two files',
    responses: { 200: { description: 'Version', schema: Full } },
    handler: ({ tenantId, project, params }) => artifacts.get(tenantId, project.id, params.version_id),
  });

  return router;
}
