-- A bloom filter index on `traces`.thread_id (docs/traces.md "The trace list"). Trace summaries are
-- keyed by (tenant, project, trace id), so a thread's traces lie anywhere in the project: the list
-- filtered by thread_id and the thread's trace count on a trace's detail page read every summary of
-- the project. The index tells, per granule of 256 summaries, that a thread is absent, so a read
-- without FINAL touches the few granules holding the thread's traces. The list reads through FINAL,
-- which does not use it well (on a live store a fresh part's one granule spans nearly every trace id,
-- and FINAL reads every granule that shares a selected granule's key range), so it first takes the
-- thread's trace ids without FINAL and then reads those traces through FINAL by key
-- (src/traces/trace-store.ts): the newest summary of each trace still decides its thread.
--
-- MATERIALIZE builds the index for the parts written before this migration (a background mutation
-- that reads the one column); a part without it is read as before. Both statements may run again.
ALTER TABLE {db}.traces {on_cluster} ADD INDEX IF NOT EXISTS thread_id_bloom thread_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE {db}.traces {on_cluster} MATERIALIZE INDEX thread_id_bloom;
