-- The settle queue's keys as uuid, like the stored-trace registry's (022; docs/settling.md).
--
-- Every flush upserts its traces here and reads each one's registry row; every settle round joins
-- its claims with the registry for the first-settle mark. With text keys each of those joins had to
-- test every key against a UUID pattern before casting it (a key that is not a UUID would fail the
-- cast, and with it the whole statement): about half of the server's time for a flush's record.
-- uuid keys compare as 16 bytes instead of by collation, and make a row and its primary key smaller.
--
-- Ingestion only ever records UUIDs (tenants and projects are uuid rows, a trace id is a v5 UUID,
-- src/ingest/trace-id.ts), in lower case. A row whose key is not a UUID cannot have come from it and
-- goes. Two spellings of one key in letter case (a project id sent in upper case, before ingestion
-- stored it in lower case) become one key: the lower-case row stays, the one ingestion writes now.
-- The table holds only traces waiting to settle, so the rewrite is short; run it with the processes
-- of the previous version stopped (docs/operations.md).
delete from settle_queue
where tenant_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
   or project_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
   or trace_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
-- Of several spellings, the lower-case one if any (its spans are the readable ones), else the oldest row.
delete from settle_queue a
using settle_queue b
where lower(a.tenant_id) = lower(b.tenant_id) and lower(a.project_id) = lower(b.project_id)
  and lower(a.trace_id) = lower(b.trace_id) and a.row_id <> b.row_id
  and (b.tenant_id || b.project_id || b.trace_id = lower(b.tenant_id || b.project_id || b.trace_id),
       b.row_id < a.row_id)
    > (a.tenant_id || a.project_id || a.trace_id = lower(a.tenant_id || a.project_id || a.trace_id),
       a.row_id < b.row_id);
alter table settle_queue
  alter column tenant_id type uuid using tenant_id::uuid,
  alter column project_id type uuid using project_id::uuid,
  alter column trace_id type uuid using trace_id::uuid,
  -- The row's `seq` when its current claim took it: a round finishes (deletes) only the rows whose seq
  -- did not move since, with nothing but its token sent (the claims' keys and seqs were sent back).
  add column claimed_seq bigint;
