import type { Router } from 'express';
import type { AppDeps } from '../../app-deps.js';
import { defineRoute } from '../../http/route.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import { LinearTracker } from './linear-tracker.js';
import { LocalTracker, LOCAL_STATES, type LocalState } from './local-tracker.js';
import { secretBox } from './tracker-access.js';
import { readTrackerSettings, writeTrackerSettings, type TrackerSettingsRow } from './tracker-settings-store.js';
import { TRACKER_PROVIDERS, type TrackerProvider } from './tracker-types.js';
import type { Principal } from '../../tenancy/tenancy-store.js';

interface SettingsInput {
  provider: TrackerProvider;
  api_key?: string;
  team_id?: string;
  team_key?: string;
  team_name?: string;
}

/** What GET/PUT answer: never the API key, only whether one is stored. */
function publicSettings(row: TrackerSettingsRow) {
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

export function trackerSettingsRoutes(router: Router, deps: AppDeps): void {
  const Settings = deps.openapi.addSchema('TicketTrackerSettings', {
    type: 'object',
    required: ['provider', 'team_id', 'team_key', 'team_name', 'api_key_configured', 'sync_status', 'last_error_code', 'last_error_message', 'last_error_at', 'updated_at'],
    properties: {
      provider: { enum: [...TRACKER_PROVIDERS] }, team_id: { type: 'string' }, team_key: { type: 'string' }, team_name: { type: 'string' },
      api_key_configured: { type: 'boolean' }, sync_status: { enum: ['healthy', 'error'] },
      last_error_code: { type: ['string', 'null'] }, last_error_message: { type: ['string', 'null'] },
      last_error_at: { type: ['string', 'null'] }, updated_at: { type: ['string', 'null'] },
    },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/integrations/ticket-tracker', tag: 'ticket-tracker', scope: 'read',
    summary: "The tenant's ticket tracker (local when never configured); the API key is never returned",
    responses: { 200: { description: 'Settings', schema: Settings } },
    handler: async ({ tenantId }) => publicSettings(await readTrackerSettings(deps.sql, tenantId)),
  });

  defineRoute<SettingsInput>(router, deps, {
    method: 'put', path: '/integrations/ticket-tracker', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Set the tenant\'s ticket tracker: `local` (optional team_key, team_name) or `linear` (api_key, team_id; the key is checked against Linear, stored encrypted and never returned; omit it to keep the stored one)',
    body: {
      type: 'object', additionalProperties: false, required: ['provider'],
      properties: {
        provider: { enum: [...TRACKER_PROVIDERS] },
        api_key: { type: 'string', minLength: 1, maxLength: 500 },
        team_id: { type: 'string', minLength: 1, maxLength: 200 },
        team_key: { type: 'string', pattern: '^[A-Z][A-Z0-9]{0,9}$' },
        team_name: { type: 'string', minLength: 1, maxLength: 200 },
      },
    },
    responses: { 200: { description: 'Settings', schema: Settings } },
    handler: async ({ principal, tenantId, body }) => {
      if (principal.projectId) throw new ForbiddenError('A project-limited key cannot change the tenant\'s ticket tracker');
      if (body.provider === 'local') {
        if (body.api_key !== undefined || body.team_id !== undefined) throw new ValidationError('api_key and team_id apply to provider linear only');
        const teamKey = body.team_key ?? 'LOC';
        await writeTrackerSettings(deps.sql, tenantId, { provider: 'local', apiKeyEncrypted: null, teamId: `local:${teamKey}`, teamKey, teamName: body.team_name?.trim() || 'Lookout' });
      } else {
        if (body.team_key !== undefined || body.team_name !== undefined) throw new ValidationError('team_key and team_name come from Linear; send team_id');
        if (!body.team_id) throw new ValidationError('team_id is required for provider linear');
        const current = await readTrackerSettings(deps.sql, tenantId);
        let apiKey = body.api_key;
        if (apiKey === undefined) {
          const stored = current.provider === 'linear' && current.api_key_encrypted ? secretBox(deps).open(current.api_key_encrypted, tenantId) : null;
          if (stored === null) throw new ValidationError('api_key is required for provider linear');
          apiKey = stored;
        }
        // Check the key and team now, so a typo surfaces here rather than at the first ticket.
        const team = await new LinearTracker(deps.config.linearApiUrl, apiKey).fetchTeam(body.team_id);
        await writeTrackerSettings(deps.sql, tenantId, {
          provider: 'linear', apiKeyEncrypted: secretBox(deps).seal(apiKey, tenantId), teamId: team.id, teamKey: team.key, teamName: team.name,
        });
      }
      return publicSettings(await readTrackerSettings(deps.sql, tenantId));
    },
  });

  /**
   * Local tickets are per tenant, but each was made for one issue (its preview names the issue). A
   * project-limited key reaches only tickets of its project's issues; any other is a 404 like an
   * unknown identifier (DESIGN "Tenancy": outside a project-limited key → not_found).
   */
  const ticketInKeyProject = async (principal: Principal, ticketId: string): Promise<boolean> => {
    if (!principal.projectId) return true;
    const rows = await deps.sql`
      select 1 from ticket_previews p join issues i on i.id = p.issue_id
      where p.tenant_id = ${principal.tenantId} and p.ticket_id = ${ticketId} and i.project_id = ${principal.projectId}
      limit 1`;
    return rows.length > 0;
  };

  // Local tickets live in Lookout, so it also serves them (their `url`) and lets a team move them through its states.
  const LocalTicket = { $ref: '#/components/schemas/Ticket' };
  defineRoute(router, deps, {
    method: 'get', path: '/integrations/ticket-tracker/tickets/{identifier}', tag: 'ticket-tracker', scope: 'read',
    summary: 'A ticket of the local tracker by identifier (e.g. LOC-12)',
    responses: { 200: { description: 'Ticket', schema: LocalTicket } },
    handler: async ({ principal, tenantId, params }) => {
      const settings = await readTrackerSettings(deps.sql, tenantId);
      const ticket = await new LocalTracker(deps.sql, tenantId, settings.team_name).findByIdentifier(params.identifier);
      if (!ticket || !(await ticketInKeyProject(principal, ticket.id))) throw new NotFoundError('Ticket not found');
      return ticket;
    },
  });

  defineRoute<{ state: LocalState }>(router, deps, {
    method: 'patch', path: '/integrations/ticket-tracker/tickets/{identifier}', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Move a local ticket to another state (todo, in_progress, done, canceled); linked issues see it on their next sync',
    body: { type: 'object', additionalProperties: false, required: ['state'], properties: { state: { enum: Object.keys(LOCAL_STATES) } } },
    responses: { 200: { description: 'Ticket', schema: LocalTicket } },
    handler: async ({ principal, tenantId, params, body }) => {
      const settings = await readTrackerSettings(deps.sql, tenantId);
      const tracker = new LocalTracker(deps.sql, tenantId, settings.team_name);
      const ticket = await tracker.findByIdentifier(params.identifier);
      if (!ticket || !(await ticketInKeyProject(principal, ticket.id))) throw new NotFoundError('Ticket not found');
      return tracker.setState(ticket.id, body.state);
    },
  });
}
