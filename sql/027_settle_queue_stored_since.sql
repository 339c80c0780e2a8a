-- The earliest time a queued trace's stored spans can have been written (docs/settling.md "Reading
-- spans back"), in epoch milliseconds: set by the flush that creates the queue row when the
-- stored-trace registry created the trace's row in that same flush (nothing of it was stored
-- before), NULL otherwise (unknown: the trace may have older spans). A later flush of the row's
-- lifetime keeps the value: its spans were registered, hence written, after the first flush's. The
-- settler's read-back of such traces skips the parts of `spans` written before it (a minmax index on
-- ingested_at, clickhouse/021), so its cost follows what was ingested lately, not the table's size.
alter table settle_queue add column stored_since_ms bigint;
