-- The stored-trace registry bounded by a window (docs/settling.md "Which traces have spans",
-- TRACE_REGISTRY_WINDOW_HOURS). Each row keeps the latest span start its flushes registered; the
-- retention job may then delete a row once no flush touched it for the window AND that latest span
-- start is older than the window, whether or not ClickHouse still holds the trace. A flush that
-- creates a row trusts "nothing stored" only for spans inside the window: a stored span that recent
-- would have kept its row.
--
-- Rows written before this migration read NULL: their spans' times are unknown, so they keep the
-- lifetime rule (deleted only when ClickHouse holds nothing of the trace), and a flush leaves the
-- NULL in place (GREATEST would skip it and forget the unknown older spans).
alter table stored_traces add column latest_span_at timestamptz;
-- Never read: its 8 bytes per row pay for latest_span_at's.
alter table stored_traces drop column first_seen_at;
