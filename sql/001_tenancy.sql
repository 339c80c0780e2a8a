-- Tenants (organizations), their users and API keys. Keys are stored only as SHA-256 hashes.
create table tenants (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table users (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  email text,
  created_at timestamptz not null default now()
);
create index users_tenant on users (tenant_id);
create unique index users_tenant_email on users (tenant_id, lower(email)) where email is not null;

create table projects (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  description text,
  sort_order integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  mcp_activated_at timestamptz,
  diagnostics_enabled boolean not null default false
);
create index projects_tenant on projects (tenant_id, sort_order, created_at);

create table api_keys (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  scope text not null check (scope in ('read', 'admin', 'ingest')),
  project_id uuid references projects(id) on delete cascade,
  user_id uuid references users(id) on delete set null,
  key_hash text not null unique,
  key_prefix text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_tenant on api_keys (tenant_id);
