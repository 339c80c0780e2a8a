import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { BindingStatus, CodeHostView, ConnectionStatus } from './code-host-schemas.js';

export type { BindingStatus, CodeHostView, ConnectionStatus };

export interface CodeHostRow {
  project_id: string;
  tenant_id: string;
  feature_enabled: boolean;
  status: ConnectionStatus;
  account_login: string | null;
  account_html_url: string | null;
  token_sealed: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
  last_error_at: Date | null;
  last_checked_at: Date | null;
  connected_at: Date | null;
  disconnected_at: Date | null;
  binding_status: BindingStatus;
  repository_owner: string | null;
  repository_name: string | null;
  repository_html_url: string | null;
  bound_at: Date | null;
  unbound_at: Date | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/**
 * Where a commit of the bound repository is shown: `<repository web URL>/commit` (append `/<sha>`).
 * The repository's web URL comes from the code host's answer; failing that it is built from the
 * account's web origin, or from the API base (api.github.com → github.com, GHES /api/v3 → its host).
 */
export function commitUrlBase(row: Pick<CodeHostRow, 'repository_owner' | 'repository_name' | 'repository_html_url' | 'account_html_url'>, apiBaseUrl: string): string | null {
  if (!row.repository_owner || !row.repository_name) return null;
  if (row.repository_html_url) return `${row.repository_html_url.replace(/\/+$/, '')}/commit`;
  let origin: string;
  try {
    if (row.account_html_url) origin = new URL(row.account_html_url).origin;
    else {
      const api = new URL(apiBaseUrl);
      origin = api.hostname === 'api.github.com' ? 'https://github.com' : api.origin;
    }
  } catch {
    return null;
  }
  return `${origin}/${encodeURIComponent(row.repository_owner)}/${encodeURIComponent(row.repository_name)}/commit`;
}

export function toView(projectId: string, row: CodeHostRow | null, apiBaseUrl: string): CodeHostView {
  return {
    project_id: projectId,
    feature_enabled: row?.feature_enabled ?? false,
    connection: {
      status: row?.status ?? 'not_connected',
      account_login: row?.account_login ?? null,
      account_html_url: row?.account_html_url ?? null,
      last_error_code: row?.last_error_code ?? null,
      last_error_at: iso(row?.last_error_at ?? null),
      connected_at: iso(row?.connected_at ?? null),
      disconnected_at: iso(row?.disconnected_at ?? null),
    },
    binding: {
      present: row ? row.binding_status !== 'none' : false,
      status: row?.binding_status ?? 'none',
      repository_owner: row?.repository_owner ?? null,
      repository_name: row?.repository_name ?? null,
      commit_url_base: row ? commitUrlBase(row, apiBaseUrl) : null,
      unbound: row?.binding_status === 'unbound',
    },
  };
}

export async function findConnection(sql: SqlHandle, tenantId: string, projectId: string): Promise<CodeHostRow | null> {
  const [row] = await sql<CodeHostRow[]>`
    select * from code_host_connections where tenant_id = ${tenantId} and project_id = ${projectId}`;
  return row ?? null;
}

/** The columns a change may set; identifiers come from this list only. */
const WRITABLE = [
  'feature_enabled', 'status', 'account_login', 'account_html_url', 'token_sealed', 'last_error_code', 'last_error_message',
  'last_error_at', 'last_checked_at', 'connected_at', 'disconnected_at', 'binding_status', 'repository_owner',
  'repository_name', 'repository_html_url', 'bound_at', 'unbound_at',
] as const;
export type CodeHostChange = Partial<Pick<CodeHostRow, (typeof WRITABLE)[number]>>;

/** Creates the project's row on first use, then applies the change; returns the stored row. */
export async function saveConnection(sql: SqlHandle, tenantId: string, projectId: string, change: CodeHostChange): Promise<CodeHostRow> {
  const columns = WRITABLE.filter((c) => c in change);
  await sql`insert into code_host_connections (project_id, tenant_id) values (${projectId}, ${tenantId}) on conflict (project_id) do nothing`;
  const values: Record<string, unknown> = { updated_at: new Date() };
  for (const column of columns) values[column] = change[column] ?? null;
  const [row] = await sql<CodeHostRow[]>`
    update code_host_connections set ${sql(values as Record<string, never>, ...(Object.keys(values) as never[]))}
    where tenant_id = ${tenantId} and project_id = ${projectId}
    returning *`;
  return row;
}
