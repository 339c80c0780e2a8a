-- Agent understanding versions (SPEC.md): append-only, numbered 1, 2, 3... per (project, agent_name).
-- The unique key is the last line of defence against a duplicate number; writers also serialize on
-- an advisory lock per (project, agent) so concurrent writes get consecutive numbers.
create table artifact_versions (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  agent_name text not null,
  version integer not null check (version >= 1),
  understanding text not null,
  expectations text not null,
  created_by text,
  created_at timestamptz not null default now(),
  unique (project_id, agent_name, version)
);
create index artifact_versions_tenant_project on artifact_versions (tenant_id, project_id, created_at);

-- Append-only at the store too: no code path may edit a recorded version.
create function artifact_versions_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'artifact versions are append-only';
end;
$$;
create trigger artifact_versions_no_update before update on artifact_versions
  for each row execute function artifact_versions_append_only();
