import { HttpError } from '../../platform/http/errors.js';

import { TRACKER_PROVIDERS, type Ticket, type TicketDraft, type TrackerProvider } from './ticket-schemas.js';

export { TRACKER_PROVIDERS, type Ticket, type TicketDraft, type TrackerProvider };

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
