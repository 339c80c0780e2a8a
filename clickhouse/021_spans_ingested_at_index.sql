-- A minmax index on `spans`.ingested_at (docs/settling.md "Reading spans back"). The settler reads a
-- round's traces back by their key; the sparse primary index cannot tell that a part lacks a trace,
-- so each trace cost a granule (8,192 rows of the key columns) in every large part whose key range
-- covers it — on a pre-filled store 17,136 rows selected per trace settled instead of 401 on an empty
-- one (bench/settle-cost, the engine's own counters). A trace whose spans were all written after a
-- known time (settle_queue.stored_since, sql/027) is read with `ingested_at >=` that time, and this
-- index drops the granules of parts written before it: what a read-back costs then follows what was
-- ingested lately, not the table's size.
--
-- MATERIALIZE builds the index for the parts written before this migration (a background mutation
-- that reads the one column); a part without it is read as before. Both statements may run again.
ALTER TABLE {db}.spans {on_cluster} ADD INDEX IF NOT EXISTS ingested_at_minmax ingested_at TYPE minmax GRANULARITY 1;

ALTER TABLE {db}.spans {on_cluster} MATERIALIZE INDEX ingested_at_minmax;
