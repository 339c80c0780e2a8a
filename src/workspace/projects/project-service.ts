import type { AppDeps } from '../../app/app-deps.js';
import { NotFoundError, ValidationError } from '../../platform/http/errors.js';
import { publishEvent } from '../../platform/postgres/shared-events.js';
import {
  createProject,
  deleteProject,
  getDiagnostics,
  listProjects,
  markMcpActivated,
  PROJECT_DELETED_TOPIC,
  reorderProjects,
  setDiagnostics,
  updateProject,
  type Project,
} from '../../tenancy/project-store.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { createProjectDeletion, kickDeletions, type Deletion } from '../../lifecycle/deletion-access.js';
import type { Origin } from '../../spans/origin.js';
import type { InstrumentationDiagnostics, ProjectInput } from './project-schemas.js';

export type { ProjectInput };

/** What a project's instrumentation sends, as the diagnostics route answers it. */
export type Diagnostics = InstrumentationDiagnostics;

/**
 * Projects as the routes see them: route → this service → tenancy/project-store. It owns the rules
 * around the rows (a project-limited key cannot create or reorder other projects, names are trimmed)
 * and announces a deletion to every process.
 */
export class ProjectService {
  constructor(private readonly deps: AppDeps) {}

  /** The tenant's projects in display order (a project-limited key sees only its project). */
  list(principal: Principal): Promise<Project[]> {
    return listProjects(this.deps.sql, principal.tenantId, principal.projectId);
  }

  create(principal: Principal, input: ProjectInput): Promise<Project> {
    if (principal.projectId) throw new ValidationError('A project-limited key cannot create projects');
    return createProject(this.deps.sql, principal.tenantId, cleanName(input.name), input.description ?? null);
  }

  /** Listed ids first, the rest keep their relative order after them; an id not the tenant's is a 400. */
  async reorder(principal: Principal, ids: string[]): Promise<void> {
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicate !== undefined) throw new ValidationError(`ordered_ids: duplicate id ${duplicate}`);
    const outside = principal.projectId ? ids.filter((id) => id !== principal.projectId) : [];
    const foreign = outside.length > 0 ? outside : await reorderProjects(this.deps.sql, principal.tenantId, ids.map((id) => id.toLowerCase()));
    if (foreign.length > 0) throw new ValidationError(`ordered_ids: unknown project id ${foreign[0]}`);
  }

  async update(tenantId: string, projectId: string, input: ProjectInput): Promise<Project> {
    const updated = await updateProject(this.deps.sql, tenantId, projectId, { name: cleanName(input.name), description: input.description });
    if (!updated) throw new NotFoundError('Project not found');
    return updated;
  }

  /**
   * Deletes the project's row (and with it every workspace record that references it) and, in the
   * same transaction, starts the deletion job that removes what the project stored in ClickHouse and
   * in the per-trace tables (src/lifecycle/): the job is recorded whenever the project goes.
   */
  async delete(tenantId: string, projectId: string, origin: Origin): Promise<Deletion> {
    const job = await this.deps.sql.begin(async (tx) => {
      if (!(await deleteProject(tx, tenantId, projectId))) throw new NotFoundError('Project not found');
      return createProjectDeletion(tx, tenantId, projectId, origin);
    });
    // Every process drops the project from its caches (the ingest project cache), so no new span is
    // accepted for it; then this process's deletion runner starts at once.
    await publishEvent(this.deps.sql, PROJECT_DELETED_TOPIC, { tenant_id: tenantId, project_id: projectId });
    kickDeletions(this.deps);
    return job;
  }

  /** The first MCP use of a project is recorded on it (its mcp_activated_at). */
  async recordMcpUse(tenantId: string, project: Project): Promise<void> {
    if (!project.mcp_activated_at) await markMcpActivated(this.deps.sql, tenantId, project.id);
  }

  // chat_connected says whether diagnostics can reach a chat channel; Lookout has no chat integration, so it is false.
  async diagnostics(tenantId: string, projectId: string): Promise<Diagnostics> {
    const settings = await getDiagnostics(this.deps.sql, tenantId, projectId);
    if (!settings) throw new NotFoundError('Project not found');
    return { enabled: settings.enabled, chat_connected: false };
  }

  async setDiagnostics(tenantId: string, projectId: string, enabled: boolean): Promise<Diagnostics> {
    await setDiagnostics(this.deps.sql, tenantId, projectId, enabled);
    return this.diagnostics(tenantId, projectId);
  }
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be blank');
  return trimmed;
}
