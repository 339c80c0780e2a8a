import type { AppDeps } from '../../app/app-deps.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../platform/http/errors.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { LinearTracker } from './linear-tracker.js';
import { LocalTracker, type LocalState } from './local-tracker.js';
import { ticketPreviewedInProject } from './ticket-link-store.js';
import { secretBox } from '../../app/secret-box-access.js';
import { readTrackerSettings, writeTrackerSettings, type TrackerSettingsRow } from './tracker-settings-store.js';
import type { Ticket } from './tracker-types.js';
import type { TrackerSettings, TrackerSettingsInput } from './ticket-schemas.js';

export type { TrackerSettingsInput };

/** What GET/PUT answer: never the API key, only whether one is stored. */
export type PublicTrackerSettings = TrackerSettings;

/**
 * The tenant's ticket tracker as the routes see it: route → this service → tracker-settings-store,
 * the Linear client (a key is checked before it is stored) and the local tracker's tickets.
 */
export class TrackerSettingsService {
  constructor(private readonly deps: AppDeps) {}

  async read(tenantId: string): Promise<PublicTrackerSettings> {
    return publicSettings(await readTrackerSettings(this.deps.sql, tenantId));
  }

  async write(principal: Principal, input: TrackerSettingsInput): Promise<PublicTrackerSettings> {
    const tenantId = principal.tenantId;
    if (principal.projectId) throw new ForbiddenError('A project-limited key cannot change the tenant\'s ticket tracker');
    if (input.provider === 'local') {
      if (input.api_key !== undefined || input.team_id !== undefined) throw new ValidationError('api_key and team_id apply to provider linear only');
      const teamKey = input.team_key ?? 'LOC';
      await writeTrackerSettings(this.deps.sql, tenantId, { provider: 'local', apiKeyEncrypted: null, teamId: `local:${teamKey}`, teamKey, teamName: input.team_name?.trim() || 'Lookout' });
    } else {
      if (input.team_key !== undefined || input.team_name !== undefined) throw new ValidationError('team_key and team_name come from Linear; send team_id');
      if (!input.team_id) throw new ValidationError('team_id is required for provider linear');
      const current = await readTrackerSettings(this.deps.sql, tenantId);
      let apiKey = input.api_key;
      if (apiKey === undefined) {
        const stored = current.provider === 'linear' && current.api_key_encrypted ? secretBox(this.deps).open(current.api_key_encrypted, tenantId) : null;
        if (stored === null) throw new ValidationError('api_key is required for provider linear');
        apiKey = stored;
      }
      // Check the key and team now, so a typo surfaces here rather than at the first ticket.
      const team = await new LinearTracker(this.deps.config.linearApiUrl, apiKey).fetchTeam(input.team_id);
      await writeTrackerSettings(this.deps.sql, tenantId, {
        provider: 'linear', apiKeyEncrypted: secretBox(this.deps).seal(apiKey, tenantId), teamId: team.id, teamKey: team.key, teamName: team.name,
      });
    }
    return this.read(tenantId);
  }

  async localTicket(principal: Principal, identifier: string): Promise<Ticket> {
    const { ticket } = await this.findLocalTicket(principal, identifier);
    return ticket;
  }

  async moveLocalTicket(principal: Principal, identifier: string, state: LocalState): Promise<Ticket> {
    const { tracker, ticket } = await this.findLocalTicket(principal, identifier);
    return tracker.setState(ticket.id, state);
  }

  private async findLocalTicket(principal: Principal, identifier: string): Promise<{ tracker: LocalTracker; ticket: Ticket }> {
    const settings = await readTrackerSettings(this.deps.sql, principal.tenantId);
    const tracker = new LocalTracker(this.deps.sql, principal.tenantId, settings.team_name);
    const ticket = await tracker.findByIdentifier(identifier);
    if (!ticket || !(await this.ticketInKeyProject(principal, ticket.id))) throw new NotFoundError('Ticket not found');
    return { tracker, ticket };
  }

  /**
   * Local tickets are per tenant, but each was made for one issue (its preview names the issue). A
   * project-limited key reaches only tickets of its project's issues; any other is a 404 like an
   * unknown identifier (outside a project-limited key → not_found).
   */
  private async ticketInKeyProject(principal: Principal, ticketId: string): Promise<boolean> {
    if (!principal.projectId) return true;
    return ticketPreviewedInProject(this.deps.sql, principal.tenantId, ticketId, principal.projectId);
  }
}

function publicSettings(row: TrackerSettingsRow): TrackerSettings {
  return {
    provider: row.provider,
    team_id: row.team_id,
    team_key: row.team_key,
    team_name: row.team_name,
    api_key_configured: row.api_key_encrypted !== null,
    sync_status: row.last_error_code ? 'error' : 'healthy',
    last_error_code: row.last_error_code,
    last_error_message: row.last_error_message,
    last_error_at: row.last_error_at?.toISOString() ?? null,
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}
