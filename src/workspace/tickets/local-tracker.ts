import { NotFoundError } from '../../platform/http/errors.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { Ticket, TicketDraft, TicketTracker } from './tracker-types.js';
import type { LocalTicketState } from './ticket-schemas.js';

/** The local provider's workflow states, with Linear's state types so both providers read alike. */
export const LOCAL_STATES = {
  todo: { name: 'Todo', type: 'unstarted' },
  in_progress: { name: 'In Progress', type: 'started' },
  done: { name: 'Done', type: 'completed' },
  canceled: { name: 'Canceled', type: 'canceled' },
} as const satisfies Record<LocalTicketState, { name: string; type: string }>;
export type LocalState = keyof typeof LOCAL_STATES;

interface LocalTicketRow {
  id: string;
  team_key: string;
  number: number;
  title: string;
  state_id: string;
  state_name: string;
  state_type: string;
  assignee_user_id: string | null;
  assignee_name: string | null;
}

export function localTicketUrl(identifier: string): string {
  return `/api/integrations/ticket-tracker/tickets/${identifier}`;
}

function toTicket(row: LocalTicketRow, teamName: string): Ticket {
  const identifier = `${row.team_key}-${row.number}`;
  return {
    id: row.id,
    identifier,
    url: localTicketUrl(identifier),
    title: row.title,
    team_id: `local:${row.team_key}`,
    team_name: teamName,
    team_key: row.team_key,
    tracker_project_id: '',
    tracker_project_name: '',
    state_id: row.state_id,
    state_name: row.state_name,
    state_type: row.state_type,
    tracker_assignee: row.assignee_user_id ? { id: row.assignee_user_id, name: row.assignee_name ?? '', avatar_url: '' } : null,
  };
}

/**
 * Tickets kept in PostgreSQL (the default provider). It runs on the caller's transaction, so the
 * ticket, its number and the link commit together or not at all.
 */
export class LocalTracker implements TicketTracker {
  constructor(
    private readonly sql: SqlHandle,
    private readonly tenantId: string,
    private readonly teamName: string,
  ) {}

  async createTicket(draft: TicketDraft, ticketId: string, options: { assigneeUserId: string | null }): Promise<Ticket> {
    const existing = await this.find(ticketId);
    if (existing) return existing;
    const [{ last_number: number }] = await this.sql<{ last_number: number }[]>`
      insert into local_ticket_counters (tenant_id, team_key, last_number) values (${this.tenantId}, ${draft.team_key}, 1)
      on conflict (tenant_id, team_key) do update set last_number = local_ticket_counters.last_number + 1
      returning last_number`;
    const state = LOCAL_STATES.todo;
    await this.sql`
      insert into local_tickets (id, tenant_id, team_key, number, title, description, state_id, state_name, state_type, assignee_user_id)
      values (${ticketId}, ${this.tenantId}, ${draft.team_key}, ${number}, ${draft.title}, ${draft.description},
              'todo', ${state.name}, ${state.type}, ${options.assigneeUserId})`;
    return (await this.find(ticketId))!;
  }

  async fetchTicket(ticketId: string): Promise<Ticket> {
    const ticket = await this.find(ticketId);
    if (!ticket) throw new NotFoundError('Local ticket not found');
    return ticket;
  }

  private async find(ticketId: string): Promise<Ticket | null> {
    const [row] = await this.sql<LocalTicketRow[]>`
      select t.id, t.team_key, t.number, t.title, t.state_id, t.state_name, t.state_type, t.assignee_user_id, u.name as assignee_name
      from local_tickets t left join users u on u.id = t.assignee_user_id
      where t.tenant_id = ${this.tenantId} and t.id = ${ticketId}`;
    return row ? toTicket(row, this.teamName) : null;
  }

  async findByIdentifier(identifier: string): Promise<Ticket | null> {
    const match = /^([A-Z][A-Z0-9]{0,9})-(\d{1,9})$/.exec(identifier);
    if (!match) return null;
    const [row] = await this.sql<{ id: string }[]>`
      select id from local_tickets where tenant_id = ${this.tenantId} and team_key = ${match[1]} and number = ${Number(match[2])}`;
    return row ? this.find(row.id) : null;
  }

  async setState(ticketId: string, state: LocalState): Promise<Ticket> {
    const s = LOCAL_STATES[state];
    await this.sql`update local_tickets set state_id = ${state}, state_name = ${s.name}, state_type = ${s.type}
      where tenant_id = ${this.tenantId} and id = ${ticketId}`;
    return this.fetchTicket(ticketId);
  }
}
