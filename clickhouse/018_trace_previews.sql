-- A trace is listed from the moment its first spans are stored, before it settles: the ingest writer
-- writes a preview row (src/spans/trace-preview.ts) with preview = 1 and the oldest possible
-- processed_at, so the settled summary, written with the settling time, always replaces it
-- (ReplacingMergeTree keeps the latest processed_at) whichever of the two lands first.
ALTER TABLE {db}.traces {on_cluster}
    ADD COLUMN IF NOT EXISTS preview UInt8 DEFAULT 0 AFTER estimated_cost_usd;
