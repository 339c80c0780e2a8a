-- Issue 17: the same rows and answers, read faster, stored smaller; converted in place.
--
-- 1. Dimensions with few distinct values per table become LowCardinality(String) (a dictionary
--    per part: group-by and filters work on small integers). Measured on 2 M generation rows:
--    the by-model query 62 → 43 ms merged, the model column 11 MiB → 1.3 MiB. Values read back
--    unchanged. Key columns (tenant_id, project_id, trace_id, span_id) and free text stay String.
-- 2. Codecs only where they help without slowing reads: trace and span ids ZSTD(1) (10.8 → 2.7 MiB
--    on the same rows, no measurable change in query time). Timestamps are left alone: DoubleDelta
--    would store them in 19 KiB instead of 9.6 MiB, but FINAL over unmerged parts decodes the whole
--    key and ran 15–30 % slower with it (Delta + ZSTD 5–12 %; bench/README.md, issue 17).
-- 3. trace.processed gets the counts the window view's coverage needs, filled at settling
--    (docs/analytics.md "Coverage"), so the view reads them instead of passing over generation and
--    tool rows: generations (model calls of the run), generations_with_provider (those that name
--    their provider), tool_calls (tool spans of the run). Existing rows are backfilled below.
--
-- Every statement may run again after a failure half-way: MODIFY COLUMN to the type a column
-- already has is a no-op, ADD COLUMN has IF NOT EXISTS, and the backfill only touches rows whose
-- counts are still 0 and writes them as the same version (the row it copies is replaced by its
-- copy: ReplacingMergeTree keeps the last inserted of equal versions).

ALTER TABLE {db}.spans {on_cluster}
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN tool_name LowCardinality(String),
    MODIFY COLUMN scope_name LowCardinality(String),
    MODIFY COLUMN scope_version LowCardinality(String),
    MODIFY COLUMN otel_trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN parent_span_id CODEC(ZSTD(1));

ALTER TABLE {db}.event_generation_completed {on_cluster}
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE {db}.event_tool_called {on_cluster}
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN tool LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE {db}.event_span_errored {on_cluster}
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN span_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE {db}.event_trace_processed {on_cluster}
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN models Array(LowCardinality(String)),
    MODIFY COLUMN cost_unpriced_models Array(LowCardinality(String)),
    ADD COLUMN IF NOT EXISTS generations UInt32 DEFAULT 0 AFTER models,
    ADD COLUMN IF NOT EXISTS generations_with_provider UInt32 DEFAULT 0 AFTER generations,
    ADD COLUMN IF NOT EXISTS tool_calls UInt32 DEFAULT 0 AFTER generations_with_provider;

ALTER TABLE {db}.event_issue {on_cluster}
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String);

ALTER TABLE {db}.traces {on_cluster}
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN release LowCardinality(String),
    MODIFY COLUMN models_used Array(LowCardinality(String));

-- The backfill: each run that has generation or tool rows, written again with its counts, as the
-- settler would have written them (a trace's spans, its events and its summary share a shard on a
-- cluster, and GLOBAL joins keep the statement valid on Distributed tables there).
INSERT INTO {db}.event_trace_processed
    (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, trace_id, agent_name, root_status_code,
     has_root, root_duration_ms, error_count, failing_tool_calls, input_tokens, output_tokens, total_tokens,
     estimated_cost_usd, estimated_cost_basis, cost_priced_tokens, cost_unpriced_models, cost_priced_at,
     cost_model_costs, models, generations, generations_with_provider, tool_calls, processed_at)
SELECT t.tenant_id, t.project_id, t.timestamp, t.actor, t.surface, t.user_id, t.api_key_id, t.trace_id, t.agent_name,
    t.root_status_code, t.has_root, t.root_duration_ms, t.error_count, t.failing_tool_calls, t.input_tokens,
    t.output_tokens, t.total_tokens, t.estimated_cost_usd, t.estimated_cost_basis, t.cost_priced_tokens,
    t.cost_unpriced_models, t.cost_priced_at, t.cost_model_costs, t.models,
    g.generations, g.generations_with_provider, c.tool_calls, t.processed_at
FROM {db}.event_trace_processed AS t FINAL
GLOBAL LEFT JOIN
(
    SELECT tenant_id, project_id, trace_id, toUInt32(count()) AS generations, toUInt32(countIf(provider != '')) AS generations_with_provider
    FROM {db}.event_generation_completed FINAL
    GROUP BY tenant_id, project_id, trace_id
) AS g ON t.tenant_id = g.tenant_id AND t.project_id = g.project_id AND t.trace_id = g.trace_id
GLOBAL LEFT JOIN
(
    SELECT tenant_id, project_id, trace_id, toUInt32(count()) AS tool_calls
    FROM {db}.event_tool_called FINAL
    GROUP BY tenant_id, project_id, trace_id
) AS c ON t.tenant_id = c.tenant_id AND t.project_id = c.project_id AND t.trace_id = c.trace_id
WHERE t.generations = 0 AND t.generations_with_provider = 0 AND t.tool_calls = 0
    AND (g.generations > 0 OR c.tool_calls > 0)
SETTINGS join_use_nulls = 0;
