import { TrackerError, type Team, type Ticket, type TicketDraft, type TicketTracker } from './tracker-types.js';

/**
 * The small part of Linear's GraphQL API Lookout uses (https://developers.linear.app/docs/graphql):
 * `team(id)` to check settings, `issueCreate` with a client-chosen id, and `issue(id)` to read a
 * ticket back. Personal API keys go in the Authorization header as they are (no Bearer prefix).
 */
const ISSUE_FIELDS = 'id identifier url title team { id name key } project { id name } state { id name type } assignee { id name avatarUrl }';

const TEAM_QUERY = 'query LookoutTeam($id: String!) { team(id: $id) { id name key } }';
const ISSUE_QUERY = `query LookoutIssue($id: String!) { issue(id: $id) { ${ISSUE_FIELDS} } }`;
const ISSUE_CREATE = `mutation LookoutIssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { ${ISSUE_FIELDS} } } }`;

const TIMEOUT_MS = 10_000;

interface LinearIssue {
  id: string;
  identifier: string;
  url: string;
  title: string;
  team: { id: string; name: string; key: string } | null;
  project: { id: string; name: string } | null;
  state: { id: string; name: string; type: string } | null;
  assignee: { id: string; name: string; avatarUrl: string | null } | null;
}

interface GraphQlError {
  message?: string;
  extensions?: { code?: string; type?: string; userPresentableMessage?: string };
}

function toTicket(issue: LinearIssue): Ticket {
  return {
    id: issue.id,
    identifier: issue.identifier,
    url: issue.url,
    title: issue.title,
    team_id: issue.team?.id ?? '',
    team_name: issue.team?.name ?? '',
    team_key: issue.team?.key ?? '',
    tracker_project_id: issue.project?.id ?? '',
    tracker_project_name: issue.project?.name ?? '',
    state_id: issue.state?.id ?? '',
    state_name: issue.state?.name ?? '',
    state_type: issue.state?.type ?? '',
    tracker_assignee: issue.assignee ? { id: issue.assignee.id, name: issue.assignee.name, avatar_url: issue.assignee.avatarUrl ?? '' } : null,
  };
}

function isNotFound(errors: GraphQlError[]): boolean {
  return errors.some((e) => /not found/i.test(e.message ?? '') || /not found/i.test(e.extensions?.userPresentableMessage ?? ''));
}

/** Maps a failed Linear call to the code last_error_code records and a detail for the caller. */
function graphQlFailure(status: number, errors: GraphQlError[]): TrackerError {
  const first = errors[0];
  const code = (first?.extensions?.code ?? '').toUpperCase();
  const said = first?.extensions?.userPresentableMessage ?? first?.message ?? `HTTP ${status}`;
  if (code === 'AUTHENTICATION_ERROR' || status === 401 || status === 403) {
    return new TrackerError('tracker_auth_failed', `Linear rejected the API key: ${said}`);
  }
  if (code === 'RATELIMITED' || status === 429) return new TrackerError('tracker_rate_limited', `Linear rate limit reached: ${said}`);
  if (isNotFound(errors)) return new TrackerError('tracker_not_found', `Linear: ${said}`);
  if (status >= 500) return new TrackerError('tracker_unavailable', `Linear answered HTTP ${status}: ${said}`);
  return new TrackerError('tracker_rejected', `Linear rejected the request: ${said}`);
}

export class LinearTracker implements TicketTracker {
  constructor(
    private readonly apiUrl: string,
    private readonly apiKey: string,
  ) {}

  private async request<T>(query: string, variables: Record<string, unknown>): Promise<{ data: T | null; errors: GraphQlError[]; status: number }> {
    let response: Response;
    try {
      response = await fetch(this.apiUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: this.apiKey },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (error as Error).message;
      throw new TrackerError('tracker_unreachable', `Linear could not be reached: ${reason}`);
    }
    const text = await response.text();
    let payload: { data?: T | null; errors?: GraphQlError[] } | null;
    try {
      payload = text ? (JSON.parse(text) as { data?: T | null; errors?: GraphQlError[] }) : null;
    } catch {
      payload = null;
    }
    if (!payload || typeof payload !== 'object') {
      if (!response.ok) throw graphQlFailure(response.status, []);
      throw new TrackerError('tracker_invalid_response', 'Linear answered with something that is not GraphQL JSON');
    }
    const errors = Array.isArray(payload.errors) ? payload.errors : [];
    if (!response.ok && errors.length === 0) throw graphQlFailure(response.status, []);
    return { data: payload.data ?? null, errors, status: response.status };
  }

  async fetchTeam(teamId: string): Promise<Team> {
    const { data, errors, status } = await this.request<{ team: Team | null }>(TEAM_QUERY, { id: teamId });
    if (errors.length > 0) throw graphQlFailure(status, errors);
    if (!data?.team) throw new TrackerError('tracker_not_found', `Linear has no team ${teamId}`);
    return data.team;
  }

  private async findIssue(id: string): Promise<Ticket | null> {
    const { data, errors, status } = await this.request<{ issue: LinearIssue | null }>(ISSUE_QUERY, { id });
    if (errors.length > 0) {
      if (isNotFound(errors)) return null;
      throw graphQlFailure(status, errors);
    }
    return data?.issue ? toTicket(data.issue) : null;
  }

  async createTicket(draft: TicketDraft, ticketId: string, options: { maybeExists: boolean }): Promise<Ticket> {
    // An earlier attempt may have created the ticket before failing to answer; Linear accepts a
    // client-chosen issue id, so looking it up first makes the retry create at most one ticket.
    if (options.maybeExists) {
      const existing = await this.findIssue(ticketId);
      if (existing) return existing;
    }
    const input = { id: ticketId, teamId: draft.team_id, title: draft.title, description: draft.description };
    const { data, errors, status } = await this.request<{ issueCreate: { success: boolean; issue: LinearIssue | null } | null }>(ISSUE_CREATE, { input });
    if (errors.length > 0) throw graphQlFailure(status, errors);
    const created = data?.issueCreate;
    if (!created?.success || !created.issue) throw new TrackerError('tracker_rejected', 'Linear did not create the issue (success false)');
    return toTicket(created.issue);
  }

  async fetchTicket(ticketId: string): Promise<Ticket> {
    const ticket = await this.findIssue(ticketId);
    if (!ticket) throw new TrackerError('tracker_not_found', `Linear has no issue ${ticketId} any more`);
    return ticket;
  }
}
