-- Monitors (SPEC.md "Monitor", DESIGN.md "Workspace routes"). Guidance (seed_hint, expected_behavior)
-- is stored but never returned; `signal` is what the guidance compiles to, `baseline` is recorded when
-- learning ends. docs/monitors.md describes the state machine.
create table monitors (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  kind text not null check (kind in ('signal', 'tool')),
  name text not null,
  seed_hint text,
  expected_behavior text,
  tool_name text,
  issue_criteria jsonb,
  signal jsonb not null,
  exploration_status text not null default 'learning' check (exploration_status in ('learning', 'active', 'paused')),
  baseline jsonb,
  activated_at timestamptz,
  last_triggered_at timestamptz,
  last_issue_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Names are unique per project, ignoring case and surrounding blanks (409 conflict).
create unique index monitors_project_name on monitors (project_id, lower(name));
create index monitors_tenant_project on monitors (tenant_id, project_id, created_at);

-- One row per (monitor, trace): re-processing a trace replaces its row, so nothing counts twice.
create table monitor_observations (
  monitor_id uuid not null references monitors(id) on delete cascade,
  trace_id text not null,
  phase text not null check (phase in ('learning', 'active')),
  calls integer not null,
  matches integer not null,
  matched boolean not null,
  observed_at timestamptz not null default now(),
  primary key (monitor_id, trace_id)
);
create index monitor_observations_recent on monitor_observations (monitor_id, phase, observed_at desc);
