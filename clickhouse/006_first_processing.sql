-- TEMPORARY copy in the analytics branch until the registry branch's migration 006 lands (same column).
ALTER TABLE {db}.event_trace_processed {on_cluster}
    ADD COLUMN IF NOT EXISTS first_processing UInt8 DEFAULT 0;
