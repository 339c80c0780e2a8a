-- Metrics (SPEC.md "Metric"). Presets (preset_key set) are OBSERVED and computed from trace data;
-- the others take events through POST /api/metrics/{id}/events.
create table metrics (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  description text,
  type text not null check (type in ('SYNTHETIC', 'OBSERVED')),
  collection_type text check (collection_type in ('BINARY', 'VALUE', 'FLAG')),
  preset_key text,
  agent_name text,
  sampling_rate double precision check (sampling_rate is null or (sampling_rate >= 0 and sampling_rate <= 1)),
  threshold double precision not null,
  interval_hours double precision not null check (interval_hours > 0),
  created_at timestamptz not null default now()
);
create unique index metrics_project_name on metrics (project_id, lower(name));
create unique index metrics_project_preset on metrics (project_id, preset_key) where preset_key is not null;
create index metrics_tenant_project on metrics (tenant_id, project_id, created_at);

-- One value per (metric, trace): an evaluator that re-sends its verdict replaces it.
create table metric_events (
  id uuid primary key,
  metric_id uuid not null references metrics(id) on delete cascade,
  trace_id text not null,
  value jsonb not null,
  created_at timestamptz not null default now(),
  unique (metric_id, trace_id)
);
create index metric_events_recent on metric_events (metric_id, created_at desc, id);
