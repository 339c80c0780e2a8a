-- Transactional outbox for the issue.* analytics events (SPEC.md "Events"). A row is written in the
-- same transaction as the change it describes; the relay copies it to ClickHouse event_issue and
-- then marks it relayed. Every column of the ClickHouse row is fixed here, so a retried relay
-- inserts exactly the same row and ReplacingMergeTree collapses it onto the first.
create table issue_event_outbox (
  id bigint generated always as identity primary key,
  event_id uuid not null unique,
  tenant_id uuid not null,
  project_id uuid not null,
  issue_id uuid not null,
  name text not null check (name in ('issue.created', 'issue.resolved', 'issue.dismissed', 'issue.reopened',
    'issue.review_started', 'issue.flagged', 'issue.unflagged', 'issue.chat_sent')),
  occurred_at timestamptz not null,
  actor text not null,
  surface text not null,
  user_id text not null,
  api_key_id text not null,
  created_at timestamptz not null default now(),
  relayed_at timestamptz
);
create index issue_event_outbox_pending on issue_event_outbox (id) where relayed_at is null;
