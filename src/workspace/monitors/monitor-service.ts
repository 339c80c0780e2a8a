import type { AppDeps } from '../../app/app-deps.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/http/errors.js';
import { compileDefinition } from './monitor-definition.js';
import {
  clearObservations,
  deleteMonitor,
  findMonitor,
  insertMonitor,
  listMonitors,
  toMonitor,
  updateMonitor,
  type Monitor,
  type MonitorChange,
  type MonitorRow,
} from './monitor-store.js';
import type { MonitorInput, MonitorPatch } from './monitor-schemas.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    monitors?: MonitorService;
  }
}

export type { MonitorInput, MonitorPatch };

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be blank');
  return trimmed;
}

const nameTaken = (name: string) => new ConflictError(`A monitor named '${name}' already exists in this project`);

export class MonitorService {
  constructor(private readonly deps: AppDeps) {}

  async create(tenantId: string, projectId: string, input: MonitorInput): Promise<Monitor> {
    const name = cleanName(input.name);
    const kind = input.kind ?? 'signal';
    const definition = compileDefinition({ ...input, kind });
    const row = await insertMonitor(this.deps.sql, tenantId, projectId, {
      kind,
      name,
      seedHint: input.seed_hint?.trim() || null,
      expectedBehavior: input.expected_behavior?.trim() || null,
      toolName: definition.kind === 'tool' ? definition.tool_name : null,
      issueCriteria: kind === 'tool' ? (input.issue_criteria ?? null) : null,
      definition,
    });
    if (!row) throw nameTaken(name);
    return toMonitor(row);
  }

  async list(tenantId: string, projectId: string): Promise<Monitor[]> {
    return (await listMonitors(this.deps.sql, tenantId, projectId)).map(toMonitor);
  }

  /** Another tenant's monitor, or one outside a project-limited key, is a 404 like an unknown id. */
  async load(principal: Principal, monitorId: string): Promise<MonitorRow> {
    const row = await findMonitor(this.deps.sql, principal.tenantId, monitorId);
    if (!row || (principal.projectId && principal.projectId !== row.project_id)) throw new NotFoundError('Monitor not found');
    return row;
  }

  async get(principal: Principal, monitorId: string): Promise<Monitor> {
    return toMonitor(await this.load(principal, monitorId));
  }

  /**
   * Rename, pause, resume or relearn (docs/monitors.md "State machine"):
   * - exploration_status 'paused' (or paused: true): stop observing; baseline and observations kept.
   * - paused: false: resume to active when a baseline was recorded, else to learning.
   * - exploration_status 'active': resume a paused monitor that has a baseline (409 while it has none).
   * - exploration_status 'learning': start learning afresh: baseline and observations are dropped.
   */
  async patch(principal: Principal, monitorId: string, patch: MonitorPatch): Promise<Monitor> {
    if (patch.name === undefined && patch.exploration_status === undefined && patch.paused === undefined) {
      throw new ValidationError('Give name, exploration_status or paused');
    }
    if (patch.exploration_status !== undefined && patch.paused !== undefined) {
      const agree = (patch.exploration_status === 'paused') === patch.paused;
      if (!agree) throw new ValidationError('exploration_status and paused disagree');
    }
    await this.load(principal, monitorId);
    return this.deps.sql.begin<Monitor>(async (tx) => {
      const current = await findMonitor(tx, principal.tenantId, monitorId, { forUpdate: true });
      if (!current) throw new NotFoundError('Monitor not found');
      const change: MonitorChange = {};
      if (patch.name !== undefined) change.name = cleanName(patch.name);
      const target = patch.exploration_status ?? (patch.paused === undefined ? undefined : patch.paused ? 'paused' : current.baseline ? 'active' : 'learning');
      if (target === 'paused') change.exploration_status = 'paused';
      else if (target === 'active') {
        if (!current.baseline) throw new ConflictError('The monitor has not finished learning: it has no baseline yet');
        change.exploration_status = 'active';
      } else if (target === 'learning' && current.exploration_status !== 'learning') {
        // From active or paused: relearn from scratch.
        change.exploration_status = 'learning';
        change.baseline = null;
        change.activated_at = null;
        await clearObservations(tx, current.id);
      }
      if (change.exploration_status === current.exploration_status && change.baseline === undefined) delete change.exploration_status;
      if (change.name === current.name) delete change.name;
      if (Object.keys(change).length === 0) return toMonitor(current);
      const row = await updateMonitor(tx, principal.tenantId, current.id, change);
      if (!row) throw nameTaken(change.name ?? current.name);
      return toMonitor(row);
    });
  }

  async remove(principal: Principal, monitorId: string): Promise<void> {
    const row = await this.load(principal, monitorId);
    await deleteMonitor(this.deps.sql, principal.tenantId, row.id);
  }
}

export function monitorService(deps: AppDeps): MonitorService {
  return (deps.services.monitors ??= new MonitorService(deps));
}
