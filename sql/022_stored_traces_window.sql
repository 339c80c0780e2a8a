-- The stored-trace registry bounded by a window, in a compact row (docs/settling.md "Which traces
-- have spans", TRACE_REGISTRY_WINDOW_HOURS; bench/registry/row-size.ts measures the row).
--
-- Each row keeps the latest span start its flushes registered; under a window the retention job may
-- delete a row once no flush touched it for the window AND that latest span start is older than the
-- window, whether or not ClickHouse still holds the trace. A flush that creates a row trusts "nothing
-- stored" only for spans inside the window: a stored span that recent would have kept its row.
--
-- Rows written before this migration read NULL: their spans' times are unknown, so they keep the
-- lifetime rule (deleted only when ClickHouse holds nothing of the trace), and a flush leaves the
-- NULL in place (GREATEST would skip it and forget the unknown older spans).
alter table stored_traces add column latest_span_at timestamptz;
-- Never read: its 8 bytes per row pay for latest_span_at's.
alter table stored_traces drop column first_seen_at;
-- Tenants, projects and trace ids are UUIDs: 16 bytes each instead of 37 as text, which takes a
-- row with its indexes from about 360 to 211 bytes. A row whose key is not a UUID can only have come
-- from the backfill copying foreign data out of ClickHouse; no writer registers such a key, so none
-- is ever looked up, and it goes. The type change rewrites the table once, under its lock.
delete from stored_traces
where tenant_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
   or project_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
   or trace_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
-- Two spellings of one key (letter case; the backfill copies ClickHouse's text) become one uuid key:
-- one row of each stays (which one does not matter: a registered row only sends the trace to
-- ClickHouse's check).
delete from stored_traces a
using stored_traces b
where lower(a.tenant_id) = lower(b.tenant_id) and lower(a.project_id) = lower(b.project_id)
  and lower(a.trace_id) = lower(b.trace_id) and a.ctid > b.ctid;
alter table stored_traces
  alter column tenant_id type uuid using tenant_id::uuid,
  alter column project_id type uuid using project_id::uuid,
  alter column trace_id type uuid using trace_id::uuid;
