-- Retention (docs/data-lifecycle.md "Retention"): how long a project's data is kept. analytics_days
-- bounds everything stored for the project (90, the most and the default); content_days bounds the
-- raw content (span attributes and events, inputs and outputs, log records, search text) and is at
-- most analytics_days.
--
-- A tenant's default (tenant_retention) applies to every project without a setting of its own
-- (project_retention); neither row exists until someone sets it. These rows are what the API answers
-- and what read paths hide expired content by; ClickHouse holds a copy of each project's effective
-- values for its TTL (clickhouse/015_retention.sql), written by the same request.
create table tenant_retention (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  analytics_days smallint not null check (analytics_days between 1 and 90),
  content_days smallint not null check (content_days between 1 and analytics_days),
  updated_at timestamptz not null default now()
);

create table project_retention (
  project_id uuid primary key references projects(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  analytics_days smallint not null check (analytics_days between 1 and 90),
  content_days smallint not null check (content_days between 1 and analytics_days),
  updated_at timestamptz not null default now()
);
create index project_retention_tenant on project_retention (tenant_id);
