import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestService } from '../../helpers/service.js';
import { sendRuns } from '../../helpers/otlp-json.js';

/**
 * One tenant's worth of resources for the security suite: every kind of id a route can take, all in
 * project `projectId` (a second project, `otherProjectId`, stays empty so a key limited to it can
 * be pointed at the first one). Names carry `marker`, so a response that leaks them is easy to spot.
 */
export interface Fixture {
  marker: string;
  projectId: string;
  otherProjectId: string;
  userId: string;
  /** A read key limited to `projectId` (its name carries the marker). */
  keyId: string;
  issueId: string;
  tagId: string;
  monitorId: string;
  metricId: string;
  versionId: string;
  agentName: string;
  traceId: string;
  otelTraceId: string;
  ticketId: string;
  ticketIdentifier: string;
  codeHostToken: string;
  webhookId: string;
  /** A deletion job of a thread that never existed (it removes nothing of the fixture). */
  deletionId: string;
}

/** The same shape filled with ids that exist nowhere: what an "unknown id" answer looks like. */
export function unknownFixture(): Fixture {
  const uuid = () => crypto.randomUUID();
  return {
    marker: `sec-unknown-${crypto.randomBytes(4).toString('hex')}`,
    projectId: uuid(),
    otherProjectId: uuid(),
    userId: uuid(),
    keyId: uuid(),
    issueId: uuid(),
    tagId: uuid(),
    monitorId: uuid(),
    metricId: uuid(),
    versionId: uuid(),
    agentName: 'sec-unknown-agent',
    traceId: uuid(),
    otelTraceId: crypto.randomBytes(16).toString('hex'),
    ticketId: uuid(),
    ticketIdentifier: 'LOC-987654',
    codeHostToken: 'unknown-token',
    webhookId: uuid(),
    deletionId: uuid(),
  };
}

/** The strings that identify a fixture's project-scoped data (what must never reach another tenant or project). */
export function projectMarkers(f: Fixture): string[] {
  return [f.marker, f.projectId, f.issueId, f.tagId, f.monitorId, f.metricId, f.versionId, f.keyId, f.traceId, f.otelTraceId, f.ticketId, f.agentName, f.webhookId, f.deletionId];
}

/** A stand-in for the code host's REST API (GitHub's shape) that accepts exactly `token`. */
export async function startCodeHostStandIn(token: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { message: 'Bad credentials' });
    if (req.url === '/user') return send(200, { login: 'octo', html_url: 'https://code.example/octo' });
    if (req.url === '/repos/octo/app') return send(200, { name: 'app', owner: { login: 'octo' }, html_url: 'https://code.example/octo/app' });
    return send(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates every resource of a Fixture through the public API with `adminKey` (tenant-wide admin). */
export async function seedTenant(svc: TestService, adminKey: string, label: string, codeHostToken: string): Promise<Fixture> {
  const marker = `sec-${label}-${crypto.randomBytes(4).toString('hex')}`;
  const call = (method: string, path: string, body?: unknown) => svc.call(method, path, { key: adminKey, body });
  const project = expectStatus(await call('POST', '/projects', { name: `${marker} project` }), 201, 'project');
  const other = expectStatus(await call('POST', '/projects', { name: 'second project' }), 201, 'other project');
  const user = expectStatus(await call('POST', '/users', { name: 'reviewer', email: `${label}-${crypto.randomUUID()}@example.com` }), 201, 'user');
  const key = expectStatus(await call('POST', '/api-keys', { name: `${marker} key`, scope: 'read', project_id: project.id, user_id: user.id }), 201, 'key');
  const issue = expectStatus(await call('POST', `/projects/${project.id}/issues`, { title: `${marker} issue`, description: 'd', assignee_user_id: user.id }), 201, 'issue');
  const tag = expectStatus(await call('POST', '/issues/tags', { project_id: project.id, name: `${marker} tag`, color: 'red' }), 201, 'tag');
  expectStatus(await call('PUT', `/issues/${issue.id}/tags/${tag.id}`), 200, 'attach tag');
  expectStatus(await call('POST', `/issues/${issue.id}/chat`, { message: `${marker} chat` }), 201, 'chat');
  expectStatus(await call('POST', `/issues/${issue.id}/pull-requests`, { title: `${marker} pr`, url: 'https://code.example/octo/app/pull/1' }), 201, 'pull request');
  const preview = expectStatus(await call('POST', `/issues/${issue.id}/tracker-ticket/preview`, {}), 200, 'preview');
  const link = expectStatus(await call('PUT', `/issues/${issue.id}/tracker-ticket`, { preview_token: preview.preview_token }), 201, 'ticket');
  const monitor = expectStatus(await call('POST', `/projects/${project.id}/monitors`, { name: `${marker} monitor` }), 201, 'monitor');
  const metric = expectStatus(await call('POST', `/projects/${project.id}/metrics`, { name: `${marker} metric`, collection_type: 'VALUE' }), 201, 'metric');
  const agentName = `${marker}-agent`;
  const version = expectStatus(
    await call('POST', `/projects/${project.id}/artifacts/versions`, { agent_name: agentName, understanding: `${marker} understanding`, expectations: 'e' }),
    201,
    'version',
  );
  expectStatus(await call('PUT', `/projects/${project.id}/code-host/connection`, { token: codeHostToken }), 200, 'code host');
  expectStatus(await call('PUT', `/projects/${project.id}/code-host/binding`, { repository: 'octo/app' }), 200, 'binding');
  // Subscribed to an event the suite never causes (monitors stay learning), so no delivery runs in the background.
  const webhook = expectStatus(
    await call('POST', `/projects/${project.id}/webhooks`, { url: `https://hooks.${label}.invalid/${marker}`, events: ['monitor.activated'], description: `${marker} webhook` }),
    201,
    'webhook',
  );

  const ingestKey = expectStatus(await call('POST', '/api-keys', { name: 'ingest', scope: 'ingest', project_id: null }), 201, 'ingest key').key;
  const [otelTraceId] = await sendRuns(svc.url, ingestKey, project.id, [
    { start: new Date(Date.now() - 60_000), agent: agentName, generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search', error: true }], failed: true },
  ]);
  let traceId = '';
  for (let i = 0; i < 150 && !traceId; i++) {
    const res = await call('GET', `/projects/${project.id}/traces`);
    traceId = res.body?.traces?.[0]?.id ?? '';
    if (!traceId) await new Promise((r) => setTimeout(r, 100));
  }
  if (!traceId) throw new Error('the seeded trace was never processed');
  expectStatus(await call('POST', `/metrics/${metric.id}/events`, { trace_id: traceId, value: 3 }), 201, 'metric event');
  const deletion = expectStatus(await call('POST', `/projects/${project.id}/deletions`, { thread_id: `${marker} no such thread` }), 202, 'deletion');

  return {
    marker,
    projectId: project.id,
    otherProjectId: other.id,
    userId: user.id,
    keyId: key.id,
    issueId: issue.id,
    tagId: tag.id,
    monitorId: monitor.id,
    metricId: metric.id,
    versionId: version.artifact_version_id,
    agentName,
    traceId,
    otelTraceId,
    ticketId: link.link.ticket.id,
    ticketIdentifier: link.link.ticket.identifier,
    codeHostToken,
    webhookId: webhook.id,
    deletionId: deletion.id,
  };
}
