-- A bloom filter index on `traces`.thread_id (docs/traces.md "The trace list"). Trace summaries are
-- keyed by (tenant, project, trace id), so a thread's traces lie anywhere in the project: the list
-- filtered by thread_id, the thread's trace count on a trace's detail page and the deletion of a
-- thread read every summary of the project. The index tells, per granule of 256 summaries, that a
-- thread is absent, so those reads touch the few granules holding the thread's traces. With FINAL
-- (the list) the engine also reads the granules of other parts that share those traces' key range
-- (use_skip_indexes_if_final_exact_mode, on by default), so the newest summary of each trace decides
-- as before: a trace whose newer summary moved it to another thread is not listed under the old one.
--
-- MATERIALIZE builds the index for the parts written before this migration (a background mutation
-- that reads the one column); a part without it is read as before. Both statements may run again.
ALTER TABLE {db}.traces {on_cluster} ADD INDEX IF NOT EXISTS thread_id_bloom thread_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE {db}.traces {on_cluster} MATERIALIZE INDEX thread_id_bloom;
