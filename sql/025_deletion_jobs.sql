-- Deletion jobs (docs/data-lifecycle.md): who asked to delete what, and how far the deletion got.
-- A job is shared work like the settle queue: any process's deletion runner claims a queued or
-- lapsed job with FOR UPDATE SKIP LOCKED and a lease, renews the lease while it works, and a crashed
-- runner's lease runs out so another process (or the restarted one) takes the job over. Every step
-- of a job can run again, so a job taken over simply starts its steps over.
--
-- project_id has no foreign key: deleting a project starts a job for its stored data, and the record
-- of that job outlives the project's own row. The tenant's deletion removes its jobs with it.
create table deletion_jobs (
  id uuid primary key,
  -- Monotonic order for the project's list (newest first) and for claims (oldest first).
  seq bigint generated always as identity,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null,
  -- What is deleted: the listed traces, the traces of one thread, the traces that started before an
  -- instant, or everything the project stored.
  kind text not null check (kind in ('traces', 'thread', 'before', 'project')),
  trace_ids uuid[],
  thread_id text,
  before timestamptz,
  check (case kind
    when 'traces' then trace_ids is not null and thread_id is null and before is null
    when 'thread' then thread_id is not null and trace_ids is null and before is null
    when 'before' then before is not null and trace_ids is null and thread_id is null
    else trace_ids is null and thread_id is null and before is null end),
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded')),
  -- Who asked (the origin stamped on every event: actor, surface, user, key).
  actor text not null,
  surface text not null,
  user_id text not null,
  api_key_id text not null,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- Progress, committed after each batch: traces removed, rows removed per table, issues left with
  -- no occurrence.
  traces_deleted bigint not null default 0,
  rows_deleted jsonb not null default '{}',
  issues_emptied integer not null default 0,
  attempts integer not null default 0,
  last_error text,
  -- A claim: who holds the job and until when. An expired lease frees the job again.
  claim_token uuid,
  lease_until timestamptz
);
create index deletion_jobs_project on deletion_jobs (tenant_id, project_id, seq desc);
create index deletion_jobs_open on deletion_jobs (seq) where status <> 'succeeded';

-- An issue whose every occurrence went with a deletion says so, instead of pointing at traces that
-- are gone: occurrences_deleted_at is when that happened (null otherwise; a new occurrence clears it).
alter table issues add column occurrences_deleted_at timestamptz;
