import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { ArtifactService } from './artifact-service.js';
import { ArtifactVersion, ArtifactVersionIdentity, ArtifactVersionInput, ArtifactVersionList, ArtifactVersionsQuery } from './artifact-schemas.js';

function agentNameOf(raw: string): string {
  const name = raw.trim();
  if (!name) throw new ValidationError('agent_name: must not be blank');
  return name;
}

export function artifactRoutes(deps: AppDeps): Router {
  const router = Router();
  const artifacts = new ArtifactService(deps);
  const Identity = deps.openapi.addSchema('AgentUnderstandingVersion', ArtifactVersionIdentity);
  const Full = deps.openapi.addSchema('AgentUnderstandingVersionFiles', ArtifactVersion);
  const Input = deps.openapi.addSchema('AgentUnderstandingVersionInput', ArtifactVersionInput);

  defineRoute<ArtifactVersionInput>(router, deps, {
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

  defineRoute<unknown, ArtifactVersionsQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/artifacts/versions', tag: 'artifacts', scope: 'read', projectParam: true,
    summary: 'List agent understanding versions, by agent name and newest version first',
    query: ArtifactVersionsQuery,
    responses: { 200: { description: 'Versions', schema: ArtifactVersionList } },
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
