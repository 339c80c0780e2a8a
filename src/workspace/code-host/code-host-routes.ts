import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { codeHostService } from './code-host-service.js';
import { CodeHostBindInput, CodeHostFeatureInput, CodeHostTokenInput, CodeHostView } from './code-host-schemas.js';

function repositoryOf(body: CodeHostBindInput): { owner: string; name: string } {
  if (body.repository !== undefined) {
    if (body.repository_owner !== undefined || body.repository_name !== undefined) {
      throw new ValidationError('Give either repository or repository_owner with repository_name, not both');
    }
    const match = /^([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})$/.exec(body.repository);
    if (!match) throw new ValidationError("repository: must be 'owner/name'");
    return { owner: match[1], name: match[2] };
  }
  if (body.repository_owner === undefined) throw new ValidationError('repository_owner is required');
  if (body.repository_name === undefined) throw new ValidationError('repository_name is required');
  return { owner: body.repository_owner, name: body.repository_name };
}

export function codeHostRoutes(deps: AppDeps): Router {
  const router = Router();
  const service = codeHostService(deps);
  const View = deps.openapi.addSchema('CodeHostConnection', CodeHostView);
  const ok = { 200: { description: 'The connection object', schema: View } };
  const base = '/projects/{project_id}/code-host';

  defineRoute(router, deps, {
    method: 'get', path: `${base}/connection`, tag: 'code-host', scope: 'read', projectParam: true,
    summary: 'The code-host connection: retained health and last-known repository identity', responses: ok,
    handler: ({ tenantId, project }) => service.get(tenantId, project.id),
  });

  defineRoute<CodeHostTokenInput>(router, deps, {
    method: 'put', path: `${base}/connection`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: 'Connect (or reconnect) the code host with an access token; the token is checked against the code-host API and never returned',
    body: CodeHostTokenInput,
    responses: ok,
    handler: ({ tenantId, project, body }) => {
      if (!body.token.trim()) throw new ValidationError('token: must not be blank');
      return service.connect(tenantId, project.id, body.token.trim());
    },
  });

  defineRoute(router, deps, {
    method: 'delete', path: `${base}/connection`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: 'Disconnect: the token is dropped, account identity and history are kept', responses: ok,
    handler: ({ tenantId, project }) => service.disconnect(tenantId, project.id),
  });

  defineRoute(router, deps, {
    method: 'post', path: `${base}/connection/check`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: 'Run the health check now (account, then the bound repository)', responses: ok,
    handler: ({ tenantId, project }) => service.check(tenantId, project.id),
  });

  defineRoute<CodeHostBindInput>(router, deps, {
    method: 'put', path: `${base}/binding`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: "Bind the project to a repository ({repository_owner, repository_name} or {repository: 'owner/name'})",
    body: CodeHostBindInput,
    responses: ok,
    handler: ({ tenantId, project, body }) => {
      const repo = repositoryOf(body);
      return service.bind(tenantId, project.id, repo.owner, repo.name);
    },
  });

  defineRoute(router, deps, {
    method: 'delete', path: `${base}/binding`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: 'Unbind the repository; its identity is kept with unbound true', responses: ok,
    handler: ({ tenantId, project }) => service.unbind(tenantId, project.id),
  });

  defineRoute<CodeHostFeatureInput>(router, deps, {
    method: 'put', path: `${base}/feature`, tag: 'code-host', scope: 'admin', projectParam: true,
    summary: 'Enable or disable the code-host feature for the project; stored history is kept either way',
    body: CodeHostFeatureInput,
    responses: ok,
    handler: ({ tenantId, project, body }) => service.setFeature(tenantId, project.id, body.enabled),
  });

  return router;
}
