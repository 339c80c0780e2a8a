-- Issues found in traces (SPEC.md "Issue", DESIGN.md "Workspace routes: Issues").
-- States: open, in_progress, resolved, dismissed; resolved and dismissed are terminal.
create table issues (
  id uuid primary key,
  -- Monotonic order for list cursors: stable even when last_seen_at moves.
  seq bigint generated always as identity,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  title text not null,
  description text,
  status text not null default 'open' check (status in ('open', 'in_progress', 'resolved', 'dismissed')),
  assignee_user_id uuid references users(id) on delete set null,
  -- Set for issues opened by extraction (docs/issues.md "Fingerprint"); null for issues created by hand.
  fingerprint text,
  flagged boolean not null default false,
  first_seen_at timestamptz,
  last_seen_at timestamptz,
  occurrence_count integer not null default 0,
  -- When the issue last entered resolved; recurrence after it reopens the issue.
  resolved_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index issues_project_list on issues (tenant_id, project_id, seq desc);
-- One issue per fingerprint and project: extraction attaches to it whatever its status.
create unique index issues_project_fingerprint on issues (project_id, fingerprint) where fingerprint is not null;

-- A failed span attached to an issue. Keyed by (issue, trace, span) so re-processing a trace adds nothing twice.
create table issue_occurrences (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  project_id uuid not null,
  issue_id uuid not null references issues(id) on delete cascade,
  trace_id uuid not null,
  otel_trace_id text not null default '',
  span_id text not null,
  occurred_at timestamptz not null,
  error_type text not null default '',
  span_name text not null default '',
  tool_name text not null default '',
  message text not null default '',
  created_at timestamptz not null default now(),
  unique (issue_id, trace_id, span_id)
);
create index issue_occurrences_trace on issue_occurrences (tenant_id, project_id, trace_id);

-- The trace's `issue_extraction` block (SPEC.md "Trace"), one row per trace, replaced on re-processing.
create table trace_issue_extractions (
  tenant_id uuid not null,
  project_id uuid not null references projects(id) on delete cascade,
  trace_id uuid not null,
  status text not null,
  reason text not null,
  issue_count integer not null,
  occurrence_count integer not null,
  completed_at timestamptz,
  primary key (tenant_id, project_id, trace_id)
);

-- Project-scoped tags; name order and uniqueness use the normalized (trimmed, lower-cased) name.
create table issue_tags (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  normalized_name text not null,
  color text not null,
  created_at timestamptz not null default now(),
  unique (project_id, normalized_name)
);

create table issue_tag_links (
  issue_id uuid not null references issues(id) on delete cascade,
  tag_id uuid not null references issue_tags(id) on delete cascade,
  tenant_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (issue_id, tag_id)
);
create index issue_tag_links_tag on issue_tag_links (tag_id);

-- Messages on an issue (POST /api/issues/{id}/chat records issue.chat_sent).
create table issue_chat_messages (
  id uuid primary key,
  seq bigint generated always as identity,
  tenant_id uuid not null,
  issue_id uuid not null references issues(id) on delete cascade,
  user_id uuid references users(id) on delete set null,
  api_key_id uuid,
  message text not null,
  created_at timestamptz not null default now()
);
create index issue_chat_messages_issue on issue_chat_messages (issue_id, seq);
