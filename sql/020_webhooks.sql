-- Signed webhooks (docs/webhooks.md). Events reach webhooks through the same transactional outbox
-- as the issue.* analytics events: a row committed with its change is later fanned out, in one
-- transaction, into one delivery attempt per subscribed endpoint, and only then marked dispatched.

-- The outbox also carries monitor.activated (learning → active). Analytics has no monitor event
-- table, so such rows are written already relayed; only the webhook fan-out reads them.
alter table issue_event_outbox alter column issue_id drop not null;
alter table issue_event_outbox add column monitor_id uuid;
alter table issue_event_outbox drop constraint issue_event_outbox_name_check;
alter table issue_event_outbox add constraint issue_event_outbox_name_check check (name in ('issue.created', 'issue.resolved',
  'issue.dismissed', 'issue.reopened', 'issue.review_started', 'issue.flagged', 'issue.unflagged', 'issue.chat_sent',
  'monitor.activated'));
alter table issue_event_outbox add constraint issue_event_outbox_subject check (
  case when name = 'monitor.activated' then monitor_id is not null and issue_id is null else issue_id is not null and monitor_id is null end);
alter table issue_event_outbox add column webhooks_dispatched_at timestamptz;
-- Events older than this migration predate every endpoint: nothing to fan out.
update issue_event_outbox set webhooks_dispatched_at = now();
create index issue_event_outbox_undispatched on issue_event_outbox (id) where webhooks_dispatched_at is null;

create table webhook_endpoints (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  url text not null,
  events text[] not null,
  format text not null check (format in ('json', 'slack')),
  description text,
  enabled boolean not null default true,
  -- AES-256-GCM, sealed like the other integration secrets (never stored or returned in clear).
  secret_sealed text not null,
  -- Deliveries that gave up in a row; 20 disables the endpoint. Any success resets it.
  consecutive_give_ups integer not null default 0,
  disabled_reason text,
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_project on webhook_endpoints (tenant_id, project_id, created_at);

-- One row per event that went to at least one endpoint: the exact JSON body every attempt sends,
-- so retries are byte-identical.
create table webhook_events (
  event_id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  type text not null,
  body text not null,
  created_at timestamptz not null default now()
);

-- The delivery log: one row per attempt. `pending` runs at next_attempt_at; `failed` is an attempt
-- that failed with a retry scheduled at next_attempt_at (the next row); `succeeded` and `gave_up`
-- end the event's delivery to that endpoint. lease_until marks an attempt in flight in some
-- process; a crash lets the lease lapse and another process sends it again (at-least-once).
create table webhook_deliveries (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  event_id uuid not null references webhook_events(event_id) on delete cascade,
  event_type text not null,
  attempt integer not null check (attempt >= 1),
  status text not null check (status in ('pending', 'succeeded', 'failed', 'gave_up')),
  response_status integer,
  error text,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  unique (endpoint_id, event_id, attempt)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_log on webhook_deliveries (endpoint_id, created_at desc, attempt desc);
create index webhook_deliveries_event on webhook_deliveries (event_id);
