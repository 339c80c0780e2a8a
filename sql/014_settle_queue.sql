-- Trace settling as shared work (docs/settling.md). One row per trace that received spans and is
-- not settled yet; any process's settler claims due rows with FOR UPDATE SKIP LOCKED and a lease.
-- The queue is the truth after a crash: there is no other record of open traces.
create table settle_queue (
  tenant_id text not null,
  project_id text not null,
  trace_id text not null,
  -- Identity of this row's lifetime: a trace settled and reopened by a late span gets a new row.
  row_id bigint generated always as identity,
  -- Bumped by every flush that touched the trace: a claim finishes only if it is unchanged.
  seq bigint not null default 1,
  first_seen timestamptz not null default now(),
  last_span_at timestamptz not null default now(),
  has_root boolean not null,
  settle_after timestamptz not null,
  -- The sender of the latest spans (recovered traces keep their attribution).
  actor text not null,
  surface text not null,
  user_id text not null,
  api_key_id text not null,
  -- A claim: who holds it and until when. Expired leases are free again (a crashed settler).
  claim_token uuid,
  lease_until timestamptz,
  primary key (tenant_id, project_id, trace_id)
);
create index settle_queue_due on settle_queue (settle_after);
-- A round renews and releases its claims by token.
create index settle_queue_claim on settle_queue (claim_token) where claim_token is not null;

-- The settle version: a strictly increasing millisecond count shared by every process. It is the
-- ClickHouse processed_at of the rows a settle writes (ReplacingMergeTree keeps the largest), so
-- the version never depends on a process's own clock.
create table settle_clock (
  id integer primary key check (id = 1),
  last_ms bigint not null
);
insert into settle_clock (id, last_ms) values (1, 0);

-- Periodic-job state shared by every process (the price catalog, docs/settling.md "Leaders").
create table shared_state (
  name text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);
