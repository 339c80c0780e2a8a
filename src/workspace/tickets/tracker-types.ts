import { HttpError } from '../../platform/http/errors.js';

export const TRACKER_PROVIDERS = ['local', 'linear'] as const;
export type TrackerProvider = (typeof TRACKER_PROVIDERS)[number];

/** The ticket of a ticket link (`link.ticket`). */
export interface Ticket {
  id: string;
  identifier: string;
  url: string;
  title: string;
  team_id: string;
  team_name: string;
  team_key: string;
  tracker_project_id: string;
  tracker_project_name: string;
  state_id: string;
  state_name: string;
  state_type: string;
  /** null when the ticket has no assignee. */
  tracker_assignee: { id: string; name: string; avatar_url: string } | null;
}

/** What the preview shows and the link creates. */
export interface TicketDraft {
  provider: TrackerProvider;
  title: string;
  description: string;
  team_id: string;
  team_key: string;
  team_name: string;
}

export interface Team {
  id: string;
  key: string;
  name: string;
}

/**
 * A failed tracker call: answered 502 `tracker_error` (the tracker, not the request, failed) with
 * a detail that says what the tracker said; `trackerCode` is what last_error_code records.
 */
export class TrackerError extends HttpError {
  constructor(
    readonly trackerCode: string,
    detail: string,
  ) {
    super(502, 'tracker_error', detail);
  }
}

/** One ticket tracker. Implementations: local (PostgreSQL) and linear (GraphQL). */
export interface TicketTracker {
  /** Creates the ticket with the given id; when `maybeExists` (an earlier attempt failed) it first looks for it. */
  createTicket(draft: TicketDraft, ticketId: string, options: { maybeExists: boolean; assigneeUserId: string | null }): Promise<Ticket>;
  /** Reads the ticket's current state from the tracker. */
  fetchTicket(ticketId: string): Promise<Ticket>;
}
