import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { TrackerSettingsService } from './tracker-settings-service.js';
import { LocalTicketMove, TrackerSettings, TrackerSettingsInput } from './ticket-schemas.js';

export function trackerSettingsRoutes(router: Router, deps: AppDeps): void {
  const trackers = new TrackerSettingsService(deps);
  const Settings = deps.openapi.addSchema('TicketTrackerSettings', TrackerSettings);

  defineRoute(router, deps, {
    method: 'get', path: '/integrations/ticket-tracker', tag: 'ticket-tracker', scope: 'read',
    summary: "The tenant's ticket tracker (local when never configured); the API key is never returned",
    responses: { 200: { description: 'Settings', schema: Settings } },
    handler: ({ tenantId }) => trackers.read(tenantId),
  });

  defineRoute<TrackerSettingsInput>(router, deps, {
    method: 'put', path: '/integrations/ticket-tracker', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Set the tenant\'s ticket tracker: `local` (optional team_key, team_name) or `linear` (api_key, team_id; the key is checked against Linear, stored encrypted and never returned; omit it to keep the stored one)',
    body: TrackerSettingsInput,
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

  defineRoute<LocalTicketMove>(router, deps, {
    method: 'patch', path: '/integrations/ticket-tracker/tickets/{identifier}', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Move a local ticket to another state (todo, in_progress, done, canceled); linked issues see it on their next sync',
    body: LocalTicketMove,
    responses: { 200: { description: 'Ticket', schema: LocalTicket } },
    handler: ({ principal, params, body }) => trackers.moveLocalTicket(principal, params.identifier, body.state),
  });
}
