import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the small part of Linear's GraphQL API that Lookout uses: `team(id)`,
 * `issue(id)` and `issueCreate(input)`. It answers like Linear does — personal API key in the
 * Authorization header, GraphQL errors with `extensions.code`, "Entity not found" for unknown
 * ids — keeps teams and issues in memory, and can be told to fail the next calls.
 */
export type Failure = 'http500' | 'graphql-error' | 'drop-after-create' | 'destroy';

export interface StandInIssue {
  id: string;
  identifier: string;
  url: string;
  title: string;
  description: string;
  team: { id: string; name: string; key: string };
  project: { id: string; name: string } | null;
  state: { id: string; name: string; type: string };
  assignee: { id: string; name: string; avatarUrl: string | null } | null;
}

export interface LinearStandIn {
  url: string;
  apiKey: string;
  teams: Map<string, { id: string; name: string; key: string }>;
  issues: Map<string, StandInIssue>;
  requests: { operation: string; authorization: string | undefined; variables: Record<string, any> }[];
  failNext(kind: Failure, times?: number): void;
  close(): Promise<void>;
}

const OPERATION = /^\s*(query|mutation)\s+(\w+)/;

export async function startLinearStandIn(apiKey = 'lin_api_test_secret_value'): Promise<LinearStandIn> {
  const teams = new Map([['team-eng', { id: 'team-eng', name: 'Engineering', key: 'ENG' }]]);
  const issues = new Map<string, StandInIssue>();
  const requests: LinearStandIn['requests'] = [];
  const failures: Failure[] = [];
  let counter = 0;

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const error = (status: number, message: string, code: string) =>
        send(status, { errors: [{ message, extensions: { code, userPresentableMessage: message } }], data: null });
      let payload: { query?: string; variables?: Record<string, any> };
      try {
        payload = JSON.parse(raw);
      } catch {
        return error(400, 'Body is not JSON', 'BAD_USER_INPUT');
      }
      const match = OPERATION.exec(payload.query ?? '');
      const operation = match?.[2] ?? '';
      const variables = payload.variables ?? {};
      requests.push({ operation, authorization: req.headers.authorization, variables });

      const failure = failures.shift();
      if (failure === 'destroy') return req.socket.destroy();
      if (failure === 'http500') return send(500, { errors: [{ message: 'Internal server error' }] });
      if (failure === 'graphql-error') return error(400, 'Something went wrong on our side', 'INTERNAL_SERVER_ERROR');
      if (req.headers.authorization !== apiKey) return error(400, 'Authentication required, not authenticated', 'AUTHENTICATION_ERROR');

      switch (operation) {
        case 'LookoutTeam': {
          const team = teams.get(variables.id);
          return team ? send(200, { data: { team } }) : error(400, 'Entity not found: Team', 'INVALID_INPUT');
        }
        case 'LookoutIssue': {
          const issue = issues.get(variables.id);
          if (!issue) return error(400, 'Entity not found: Issue', 'INVALID_INPUT');
          const { description: _d, ...visible } = issue;
          return send(200, { data: { issue: visible } });
        }
        case 'LookoutIssueCreate': {
          const input = variables.input ?? {};
          const team = teams.get(input.teamId);
          if (!team) return error(400, 'Entity not found: Team', 'INVALID_INPUT');
          if (typeof input.title !== 'string' || !input.title) return error(400, 'title must not be empty', 'INVALID_INPUT');
          if (input.id && issues.has(input.id)) return error(400, 'Entity already exists', 'INVALID_INPUT');
          counter++;
          const id = input.id ?? `generated-${counter}`;
          const issue: StandInIssue = {
            id,
            identifier: `${team.key}-${counter}`,
            url: `https://linear.app/acme/issue/${team.key}-${counter}`,
            title: input.title,
            description: input.description ?? '',
            team,
            project: { id: 'proj-1', name: 'Reliability' },
            state: { id: 'state-backlog', name: 'Backlog', type: 'backlog' },
            assignee: null,
          };
          issues.set(id, issue);
          if (failure === 'drop-after-create') return send(502, { errors: [{ message: 'Bad gateway' }] });
          const { description: _d, ...visible } = issue;
          return send(200, { data: { issueCreate: { success: true, issue: visible } } });
        }
        default:
          return error(400, `Unknown operation ${operation}`, 'GRAPHQL_VALIDATION_FAILED');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    apiKey,
    teams,
    issues,
    requests,
    failNext(kind, times = 1) {
      for (let i = 0; i < times; i++) failures.push(kind);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
