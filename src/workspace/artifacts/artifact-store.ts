import crypto from 'node:crypto';
import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import { isUuid } from '../../platform/uuid.js';
import type { ArtifactVersion, ArtifactVersionIdentity } from './artifact-schemas.js';

export type { ArtifactVersion, ArtifactVersionIdentity };

interface VersionRow {
  id: string;
  agent_name: string;
  version: number;
  understanding: string;
  expectations: string;
  created_at: Date;
}

export type WriteOutcome =
  | { kind: 'created'; version: ArtifactVersionIdentity }
  | { kind: 'first_needs_both'; missing: string[] }
  | { kind: 'conflict'; latest: number };

export interface VersionInput {
  agentName: string;
  understanding?: string;
  expectations?: string;
  /** The version the writer started from; null/undefined skips the check. 0 means "no version yet". */
  basedOnVersion?: number | null;
  createdBy: string | null;
}

function identity(row: VersionRow): ArtifactVersionIdentity {
  const at = row.created_at.toISOString();
  // Versions are never edited, so updated_at is the creation time.
  return { artifact_version_id: row.id, version: row.version, agent_name: row.agent_name, created_at: at, updated_at: at };
}

function full(row: VersionRow): ArtifactVersion {
  return { ...identity(row), understanding: row.understanding, expectations: row.expectations };
}

/**
 * Records the next version for (project, agent). Writers for the same agent serialize on a
 * transaction-scoped advisory lock keyed by the pair, so concurrent writes get consecutive numbers
 * (no gap, no duplicate); the unique key (project_id, agent_name, version) backs that up. An omitted
 * file is carried forward from the latest version; the first version must bring both.
 */
export async function writeVersion(sql: Sql, tenantId: string, projectId: string, input: VersionInput): Promise<WriteOutcome> {
  return (await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${`artifact:${projectId}:${input.agentName}`}, 0))`;
    const [latest] = await tx<VersionRow[]>`
      select id, agent_name, version, understanding, expectations, created_at from artifact_versions
      where tenant_id = ${tenantId} and project_id = ${projectId} and agent_name = ${input.agentName}
      order by version desc limit 1`;
    const latestNumber = latest?.version ?? 0;
    if (input.basedOnVersion !== undefined && input.basedOnVersion !== null && input.basedOnVersion !== latestNumber) {
      return { kind: 'conflict', latest: latestNumber } as const;
    }
    const understanding = input.understanding ?? latest?.understanding;
    const expectations = input.expectations ?? latest?.expectations;
    if (understanding === undefined || expectations === undefined) {
      const missing = [understanding === undefined ? 'understanding' : null, expectations === undefined ? 'expectations' : null].filter((m): m is string => m !== null);
      return { kind: 'first_needs_both', missing } as const;
    }
    const [row] = await tx<VersionRow[]>`
      insert into artifact_versions (id, tenant_id, project_id, agent_name, version, understanding, expectations, created_by)
      values (${crypto.randomUUID()}, ${tenantId}, ${projectId}, ${input.agentName}, ${latestNumber + 1},
              ${understanding}, ${expectations}, ${input.createdBy})
      returning id, agent_name, version, understanding, expectations, created_at`;
    return { kind: 'created', version: identity(row) } as const;
  }));
}

/** Versions of a project, optionally of one agent: by agent name, newest version first. */
export async function listVersions(sql: SqlHandle, tenantId: string, projectId: string, agentName: string | null): Promise<ArtifactVersionIdentity[]> {
  const rows = await sql<VersionRow[]>`
    select id, agent_name, version, understanding, expectations, created_at from artifact_versions
    where tenant_id = ${tenantId} and project_id = ${projectId}
      ${agentName !== null ? sql`and agent_name = ${agentName}` : sql``}
    order by agent_name, version desc`;
  return rows.map(identity);
}

export async function findVersion(sql: SqlHandle, tenantId: string, projectId: string, versionId: string): Promise<ArtifactVersion | null> {
  if (!isUuid(versionId)) return null;
  const [row] = await sql<VersionRow[]>`
    select id, agent_name, version, understanding, expectations, created_at from artifact_versions
    where tenant_id = ${tenantId} and project_id = ${projectId} and id = ${versionId}`;
  return row ? full(row) : null;
}

/**
 * Versions written per UTC day in [start, endExclusive): the ROI view counts them as
 * `artifact_iterations`. Days without versions are absent.
 */
export async function artifactIterationsByDay(
  sql: SqlHandle,
  tenantId: string,
  projectId: string,
  start: Date,
  endExclusive: Date,
): Promise<{ date: string; value: number }[]> {
  const rows = await sql<{ day: string; n: number }[]>`
    select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as n
    from artifact_versions
    where tenant_id = ${tenantId} and project_id = ${projectId} and created_at >= ${start} and created_at < ${endExclusive}
    group by 1 order by 1`;
  return rows.map((r) => ({ date: r.day, value: r.n }));
}

/** Lifetime number of versions in a project (the ROI view's total). */
export async function countArtifactVersions(sql: SqlHandle, tenantId: string, projectId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from artifact_versions where tenant_id = ${tenantId} and project_id = ${projectId}`;
  return row.n;
}
