-- Issue 17: the per-span event tables' trace and span ids back to LZ4 (from ZSTD(1), migration 005).
--
-- FINAL reads a table's sorting-key columns for every row of the parts it has to check, also where
-- the parts' time ranges do not overlap; on fresh, unmerged parts (what ingestion writes, before
-- background merges leave one part per partition) that means decoding trace_id and span_id of every
-- row in the window. With ZSTD(1) that decoding was most of FINAL's cost: 2 M generation rows in 16
-- time-ordered parts, interleaved, p50 FINAL 920 ms with ZSTD(1) ids against 564 ms with LZ4, the
-- plain read (no FINAL) 252 / 310 ms (load 12–14; bench/query/final-key-columns.ts, bench/README.md).
-- Migration 005 measured ZSTD as free on merged parts only, where FINAL reads no key columns.
-- Costs about 4 bytes a row on disk (005: 2.7 → 10.8 MiB for both ids of 2 M rows). Answers are
-- unchanged: a codec is how bytes are stored.
--
-- Explicit LZ4, not REMOVE CODEC, so a server configured with another default compression stores
-- them the same way. Parts written before keep ZSTD until a merge rewrites them (ALTER of a codec
-- changes the metadata only); fresh parts — the ones FINAL has to check — are written with LZ4.
-- Running it again is a no-op (the column already has the codec).

ALTER TABLE {db}.event_generation_completed {on_cluster}
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE {db}.event_tool_called {on_cluster}
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE {db}.event_span_errored {on_cluster}
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);
