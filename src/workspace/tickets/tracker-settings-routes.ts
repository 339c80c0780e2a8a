import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { LOCAL_STATES, type LocalState } from './local-tracker.js';
import { TrackerSettingsService, type TrackerSettingsInput } from './tracker-settings-service.js';
import { TRACKER_PROVIDERS } from './tracker-types.js';

export function trackerSettingsRoutes(router: Router, deps: AppDeps): void {
  const trackers = new TrackerSettingsService(deps);
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
    handler: ({ tenantId }) => trackers.read(tenantId),
  });

  defineRoute<TrackerSettingsInput>(router, deps, {
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
    handler: ({ principal, body }) => trackers.write(principal, body),
  });

  // Local tickets live in Lookout, so it also serves them (their `url`) and lets a team move them through its states.
  const LocalTicket = { $ref: '#/components/schemas/Ticket' };
  defineRoute(router, deps, {
    method: 'get', path: '/integrations/ticket-tracker/tickets/{identifier}', tag: 'ticket-tracker', scope: 'read',
    summary: 'A ticket of the local tracker by identifier (e.g. LOC-12)',
    responses: { 200: { description: 'Ticket', schema: LocalTicket } },
    handler: ({ principal, params }) => trackers.localTicket(principal, params.identifier),
  });

  defineRoute<{ state: LocalState }>(router, deps, {
    method: 'patch', path: '/integrations/ticket-tracker/tickets/{identifier}', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Move a local ticket to another state (todo, in_progress, done, canceled); linked issues see it on their next sync',
    body: { type: 'object', additionalProperties: false, required: ['state'], properties: { state: { enum: Object.keys(LOCAL_STATES) } } },
    responses: { 200: { description: 'Ticket', schema: LocalTicket } },
    handler: ({ principal, params, body }) => trackers.moveLocalTicket(principal, params.identifier, body.state),
  });
}
