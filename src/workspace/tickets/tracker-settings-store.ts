import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { TrackerProvider } from './tracker-types.js';

export interface TrackerSettingsRow {
  provider: TrackerProvider;
  api_key_encrypted: string | null;
  team_id: string;
  team_key: string;
  team_name: string;
  last_error_code: string | null;
  last_error_message: string | null;
  last_error_at: Date | null;
  updated_at: Date | null;
}

/** A tenant that never configured a tracker uses the local one (local is the default). */
export const DEFAULT_LOCAL: TrackerSettingsRow = {
  provider: 'local',
  api_key_encrypted: null,
  team_id: 'local:LOC',
  team_key: 'LOC',
  team_name: 'Lookout',
  last_error_code: null,
  last_error_message: null,
  last_error_at: null,
  updated_at: null,
};

export async function readTrackerSettings(sql: SqlHandle, tenantId: string): Promise<TrackerSettingsRow> {
  const [row] = await sql<TrackerSettingsRow[]>`
    select provider, api_key_encrypted, team_id, team_key, team_name, last_error_code, last_error_message, last_error_at, updated_at
    from ticket_trackers where tenant_id = ${tenantId}`;
  return row ?? DEFAULT_LOCAL;
}

export async function writeTrackerSettings(
  sql: SqlHandle,
  tenantId: string,
  s: { provider: TrackerProvider; apiKeyEncrypted: string | null; teamId: string; teamKey: string; teamName: string },
): Promise<void> {
  await sql`
    insert into ticket_trackers (tenant_id, provider, api_key_encrypted, team_id, team_key, team_name)
    values (${tenantId}, ${s.provider}, ${s.apiKeyEncrypted}, ${s.teamId}, ${s.teamKey}, ${s.teamName})
    on conflict (tenant_id) do update set provider = excluded.provider, api_key_encrypted = excluded.api_key_encrypted,
      team_id = excluded.team_id, team_key = excluded.team_key, team_name = excluded.team_name,
      last_error_code = null, last_error_message = null, last_error_at = null, updated_at = now()`;
}

/** A failed tracker call that has no link to record it on (creating a ticket) is recorded on the tenant's tracker. */
export async function recordTrackerError(sql: SqlHandle, tenantId: string, code: string, message: string): Promise<void> {
  await sql`
    insert into ticket_trackers (tenant_id, provider, team_id, team_key, team_name, last_error_code, last_error_message, last_error_at)
    values (${tenantId}, ${DEFAULT_LOCAL.provider}, ${DEFAULT_LOCAL.team_id}, ${DEFAULT_LOCAL.team_key}, ${DEFAULT_LOCAL.team_name}, ${code}, ${message}, now())
    on conflict (tenant_id) do update set last_error_code = excluded.last_error_code,
      last_error_message = excluded.last_error_message, last_error_at = excluded.last_error_at`;
}

export async function clearTrackerError(sql: SqlHandle, tenantId: string): Promise<void> {
  await sql`update ticket_trackers set last_error_code = null, last_error_message = null, last_error_at = null
    where tenant_id = ${tenantId} and last_error_code is not null`;
}
