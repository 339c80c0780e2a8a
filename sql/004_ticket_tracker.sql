-- The ticket tracker of a tenant (DESIGN.md "Ticket tracker"). The Linear API key is stored only
-- encrypted (AES-256-GCM, docs/issues.md "Tracker credentials") and never returned.
create table ticket_trackers (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  provider text not null check (provider in ('local', 'linear')),
  api_key_encrypted text,
  team_id text not null,
  team_key text not null,
  team_name text not null,
  last_error_code text,
  last_error_message text,
  last_error_at timestamptz,
  updated_at timestamptz not null default now()
);

-- Tickets of the `local` provider: identifiers like LOC-12, numbered per tenant and team key.
create table local_tickets (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  team_key text not null,
  number integer not null,
  title text not null,
  description text not null default '',
  state_id text not null,
  state_name text not null,
  state_type text not null,
  assignee_user_id uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (tenant_id, team_key, number)
);

create table local_ticket_counters (
  tenant_id uuid not null references tenants(id) on delete cascade,
  team_key text not null,
  last_number integer not null,
  primary key (tenant_id, team_key)
);

-- A confirmed ticket draft, single use and expiring. Only the token's hash is kept.
create table ticket_previews (
  token_hash text primary key,
  tenant_id uuid not null,
  issue_id uuid not null references issues(id) on delete cascade,
  -- Becomes the tracker ticket id, so a retried create finds the ticket instead of making a second one.
  ticket_id uuid not null,
  draft jsonb not null,
  -- Failed create attempts with this token; a retry first looks the ticket up by ticket_id.
  attempts integer not null default 0,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index ticket_previews_issue on ticket_previews (issue_id);

-- The ticket linked to an issue: at most one, and only ever with a created ticket (never half-linked).
create table issue_ticket_links (
  id uuid primary key,
  tenant_id uuid not null,
  issue_id uuid not null unique references issues(id) on delete cascade,
  provider text not null,
  origin text not null,
  sync_status text not null,
  linked_at timestamptz not null default now(),
  last_successful_sync_at timestamptz,
  last_error_code text,
  last_error_message text,
  last_error_at timestamptz,
  ticket jsonb not null
);

create table issue_ticket_activity (
  id uuid primary key,
  seq bigint generated always as identity,
  tenant_id uuid not null,
  issue_id uuid not null references issues(id) on delete cascade,
  type text not null,
  actor_type text not null,
  actor_id text not null,
  ticket_identifier text not null default '',
  metadata jsonb not null default '{}',
  occurred_at timestamptz not null default now()
);
create index issue_ticket_activity_issue on issue_ticket_activity (issue_id, seq);

create table issue_pull_requests (
  id uuid primary key,
  tenant_id uuid not null,
  issue_id uuid not null references issues(id) on delete cascade,
  title text not null,
  url text not null,
  created_at timestamptz not null default now(),
  unique (issue_id, url)
);
