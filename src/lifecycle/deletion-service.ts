/**
 * Deletion jobs as the routes see them: route → this service → deletion-store. It turns a request
 * into one selection (exactly one of trace_ids, thread_id, before; OpenTelemetry trace ids become
 * Lookout's), records who asked, wakes the runner after the commit, and checks access by job id.
 */
import crypto from 'node:crypto';
import type { AppDeps } from '../app/app-deps.js';
import { NotFoundError, ValidationError } from '../platform/http/errors.js';
import type { Origin } from '../spans/origin.js';
import { isOtelTraceId, lookoutTraceId } from '../spans/trace-id.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import { kickDeletions } from './deletion-access.js';
import type { Deletion, NewDeletion } from './deletion-schemas.js';
import { findDeletion, insertDeletion, listDeletions, toDeletion, type Selection } from './deletion-store.js';

export class DeletionService {
  constructor(private readonly deps: AppDeps) {}

  async create(tenantId: string, projectId: string, body: NewDeletion, origin: Origin): Promise<Deletion> {
    const row = await insertDeletion(this.deps.sql, { id: crypto.randomUUID(), tenantId, projectId, selection: selectionOf(projectId, body), origin });
    kickDeletions(this.deps);
    return toDeletion(row);
  }

  /** A job of the caller's tenant (and of its key's project, for a project-limited key); 404 like an unknown id otherwise. */
  async get(principal: Principal, id: string): Promise<Deletion> {
    const row = await findDeletion(this.deps.sql, principal.tenantId, id);
    if (!row || (principal.projectId && row.project_id !== principal.projectId)) throw new NotFoundError('Deletion not found');
    return toDeletion(row);
  }

  async list(tenantId: string, projectId: string, limit: number): Promise<Deletion[]> {
    return (await listDeletions(this.deps.sql, tenantId, projectId, limit)).map(toDeletion);
  }
}

function selectionOf(projectId: string, body: NewDeletion): Selection {
  const given = (['trace_ids', 'thread_id', 'before'] as const).filter((key) => body[key] !== undefined);
  if (given.length !== 1) throw new ValidationError('body: give exactly one of trace_ids, thread_id or before');
  if (body.trace_ids) {
    const ids = body.trace_ids.map((id) => {
      const lowered = id.toLowerCase();
      return isOtelTraceId(lowered) ? lookoutTraceId(projectId, lowered) : lowered;
    });
    return { kind: 'traces', traceIds: [...new Set(ids)] };
  }
  if (body.thread_id !== undefined) {
    if (!body.thread_id.trim()) throw new ValidationError('thread_id: must not be blank');
    return { kind: 'thread', threadId: body.thread_id };
  }
  return { kind: 'before', before: new Date(body.before as string) };
}
