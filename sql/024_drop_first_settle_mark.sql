-- The first-settle mark goes: no reader takes trace.processed rows by it (they are read with FINAL,
-- src/platform/clickhouse/sql/processed-traces.ts says why), so the row-locking UPDATE every settle
-- round ran to set it bought nothing. ClickHouse's first_processing column stays at its default 0
-- for rows written from now on.
alter table stored_traces drop column first_settled_at;
