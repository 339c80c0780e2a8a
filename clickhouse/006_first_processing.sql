-- Issue 15 / 17: which trace.processed row is the first processing of its trace.
--
-- The settler marks a trace's first settle in PostgreSQL (stored_traces.first_settled_at, set once
-- with UPDATE … WHERE first_settled_at IS NULL) and writes that round's row with first_processing = 1;
-- every later processing of the trace (a late span reopened it, a retried round) is written with 0.
-- So a key has at most one row with 1, and a key whose only row has 1 has exactly one row: a reader
-- may take such rows without FINAL and only the keys with a 0 row through FINAL.
--
-- Existing rows get the default 0: "may have other versions, read through FINAL", which is always
-- exact. ADD COLUMN IF NOT EXISTS makes the statement safe to run again after a failure.

ALTER TABLE {db}.event_trace_processed {on_cluster}
    ADD COLUMN IF NOT EXISTS first_processing UInt8 DEFAULT 0 AFTER tool_calls;
