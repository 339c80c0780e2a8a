-- Per-project code-host connection and repository binding (SPEC.md "Code-host connection").
-- Rows are never deleted by disconnect/unbind/disable: the history is the retained state.
create table code_host_connections (
  project_id uuid primary key references projects(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  feature_enabled boolean not null default false,
  status text not null default 'not_connected',
  account_login text,
  account_html_url text,
  token_sealed text,
  last_error_code text,
  last_error_message text,
  last_error_at timestamptz,
  last_checked_at timestamptz,
  connected_at timestamptz,
  disconnected_at timestamptz,
  binding_status text not null default 'none',
  repository_owner text,
  repository_name text,
  repository_html_url text,
  bound_at timestamptz,
  unbound_at timestamptz,
  updated_at timestamptz not null default now()
);
create index code_host_connections_tenant on code_host_connections (tenant_id);
