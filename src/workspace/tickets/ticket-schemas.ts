/**
 * The ticket-tracker routes' requests and answers (an issue's ticket link, its preview, pull
 * requests, the tenant's tracker settings, local tickets), declared once as TypeBox schemas: the
 * JSON Schema the OpenAPI document carries and ajv validates with, and the types (`Static`) the
 * services return and the dashboard imports. This file imports nothing of the server, so the
 * dashboard's type check can read it; the routes register the schemas.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { anyObject, bareEnum, componentRef, nullable } from '../../platform/http/shape-kit.js';

export const TRACKER_PROVIDERS = ['local', 'linear'] as const;
export type TrackerProvider = (typeof TRACKER_PROVIDERS)[number];
export const SYNC_STATUSES = ['healthy', 'error'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];
/** The local tracker's workflow states (local-tracker.ts gives each its name and Linear state type). */
export const LOCAL_TICKET_STATES = ['todo', 'in_progress', 'done', 'canceled'] as const;
export type LocalTicketState = (typeof LOCAL_TICKET_STATES)[number];

const str = Type.String();
const nstr = nullable(Type.String());
/** `{oneOf: [{type: 'null'}, schema]}`: null first, as the document has always listed it. */
const nullOr = <S extends TSchema>(schema: S) => Type.Unsafe<Static<S> | null>({ oneOf: [{ type: 'null' }, schema] });

/** The ticket of a ticket link (`link.ticket`); tracker_assignee is null when the ticket has no assignee. */
export const Ticket = Type.Object({
  id: str,
  identifier: str,
  url: str,
  title: str,
  team_id: str,
  team_name: str,
  team_key: str,
  tracker_project_id: str,
  tracker_project_name: str,
  state_id: str,
  state_name: str,
  state_type: str,
  tracker_assignee: nullOr(Type.Object({ id: str, name: str, avatar_url: str })),
});
export type Ticket = Static<typeof Ticket>;

export const PullRequest = Type.Object({ id: str, title: str, url: str });
export type PullRequest = Static<typeof PullRequest>;

/** One `activity[]` entry of a ticket link. */
export const TicketActivity = Type.Object({
  id: str,
  type: str,
  actor_type: str,
  actor_id: str,
  ticket_identifier: str,
  metadata: anyObject(),
  occurred_at: str,
});
export type TicketActivity = Static<typeof TicketActivity>;

export const TicketLinkDetail = Type.Object({
  id: str,
  origin: str,
  linked_at: str,
  last_successful_sync_at: nstr,
  last_error_at: nstr,
  sync_status: bareEnum(SYNC_STATUSES),
  last_error_code: nstr,
  last_error_message: nstr,
  ticket: componentRef('Ticket', Ticket),
});
export type TicketLinkDetail = Static<typeof TicketLinkDetail>;

/** An issue's ticket link. `link` is null while no ticket is linked (pull requests and activity still show). */
export const TicketLink = Type.Object({
  project_id: str,
  issue_id: str,
  issue_assignee_user_id: nstr,
  link: nullOr(TicketLinkDetail),
  activity: Type.Array(TicketActivity),
  pull_requests: Type.Array(componentRef('PullRequest', PullRequest)),
});
export type TicketLink = Static<typeof TicketLink>;

/** What the preview shows and the link creates. */
export const TicketDraft = Type.Object({
  provider: Type.Unsafe<TrackerProvider>(str),
  title: str,
  description: str,
  team_id: str,
  team_key: str,
  team_name: str,
});
export type TicketDraft = Static<typeof TicketDraft>;

export const TicketPreview = Type.Object({ preview_token: str, ticket: TicketDraft, expires_at: str });
export type TicketPreview = Static<typeof TicketPreview>;

/** POST /issues/{issue_id}/tracker-ticket/preview: the draft's title and description, both optional. */
export const TicketPreviewInput = Type.Object(
  { title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })), description: Type.Optional(Type.String({ maxLength: 20000 })) },
  { additionalProperties: false },
);
export type TicketPreviewInput = Static<typeof TicketPreviewInput>;

/** PUT /issues/{issue_id}/tracker-ticket. */
export const TicketLinkInput = Type.Object({ preview_token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export type TicketLinkInput = Static<typeof TicketLinkInput>;

/** POST /issues/{issue_id}/pull-requests. */
export const PullRequestInput = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: 500 }), url: Type.String({ format: 'uri', maxLength: 2000 }) },
  { additionalProperties: false },
);
export type PullRequestInput = Static<typeof PullRequestInput>;

/** The tenant's tracker as GET/PUT answer it: never the API key, only whether one is stored. */
export const TrackerSettings = Type.Object({
  provider: bareEnum(TRACKER_PROVIDERS),
  team_id: str,
  team_key: str,
  team_name: str,
  api_key_configured: Type.Boolean(),
  sync_status: bareEnum(SYNC_STATUSES),
  last_error_code: nstr,
  last_error_message: nstr,
  last_error_at: nstr,
  updated_at: nstr,
});
export type TrackerSettings = Static<typeof TrackerSettings>;

/** PUT /integrations/ticket-tracker. */
export const TrackerSettingsInput = Type.Object(
  {
    provider: bareEnum(TRACKER_PROVIDERS),
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    team_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    team_key: Type.Optional(Type.String({ pattern: '^[A-Z][A-Z0-9]{0,9}$' })),
    team_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type TrackerSettingsInput = Static<typeof TrackerSettingsInput>;

/** PATCH /integrations/ticket-tracker/tickets/{identifier}. */
export const LocalTicketMove = Type.Object({ state: bareEnum(LOCAL_TICKET_STATES) }, { additionalProperties: false });
export type LocalTicketMove = Static<typeof LocalTicketMove>;
