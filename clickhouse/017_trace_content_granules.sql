-- trace_content (014) in granules of 256 rows instead of 8192, rebuilt (docs/search.md "How it works").
--
-- A granule is what ClickHouse reads at least. A trace's rows are adjacent (the key ends in trace
-- and field), and a search reads few traces by the key (the candidates the text index names, the
-- newest traces a common word is checked among, the snippets of a page) or the few rows the bigram
-- index picks: with 8192 rows a granule held the text of ~1,400 traces, so each trace read cost a
-- thousand others' text. On 200,000 traces of bench/search's data, the rows of trace_content the
-- engine selected to read for one word's traces (its own counters, so the machine's load does not
-- matter), 8192 -> 256 rows a granule:
--   a word in 2 traces                16,498 -> 597
--   退货 in 200 traces                 889,458 -> 50,391
--   "late delivery fee" in 200 traces 924,882 -> 50,556
-- The text compresses a little worse in smaller blocks: 158.7 -> 165.5 MiB (+4 %); the index is
-- unchanged (48.5 MiB), as is what an insert builds.
--
-- The index stays the bigram one. A word index (tokenizer splitByNonAlpha), whose word list
-- ClickHouse scans to answer LIKE '%word%' for a whole row set, was measured too: in this engine
-- (26.7) the scan takes ASCII letters and digits only, so Cyrillic, accented, Chinese or Japanese
-- words would find no help at all (退货 read all 1,200,000 rows), and a phrase only through its
-- separate words. The bigrams serve every script the same way.
--
-- A table setting like the granularity cannot change in place, so the table is rebuilt by the
-- table-rebuild recipe (scripts/clickhouse-rebuilds/table-rebuild.ts writes the statements below), as
-- 009 and 010 were: a copy trace_content_v017 (columns, index, key, partitions and TTL as 014 and 015
-- left them: the retention columns and the content TTL come along), every
-- row version copied into it with its version column (processed_at: ReplacingMergeTree then keeps the
-- same newest row), the two swapped by EXCHANGE TABLES (atomic), then rows an older process wrote
-- during the copy copied after it, and the old data dropped. Every statement may run again from the
-- top after an interruption anywhere; the file is recorded only after its last statement.

-- trace_content
-- Rows a stopped earlier run left under the _v017 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.trace_content_v017 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + toIntervalDay(content_days)
SETTINGS index_granularity = 256;

INSERT INTO {db}.trace_content (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM {db}.trace_content_v017
WHERE (SELECT count() FROM {db}.trace_content_v017) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.trace_content_v017)
    AND cityHash64(tenant_id, project_id, trace_id, field, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, field, processed_at) FROM {db}.trace_content
        WHERE (SELECT count() FROM {db}.trace_content_v017) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.trace_content_v017)
    );

DROP TABLE IF EXISTS {db}.trace_content_v017 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.trace_content_v017 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + toIntervalDay(content_days)
SETTINGS index_granularity = 256;

INSERT INTO {db}.trace_content_v017 (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM {db}.trace_content;

EXCHANGE TABLES {db}.trace_content AND {db}.trace_content_v017 {on_cluster};

INSERT INTO {db}.trace_content (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM {db}.trace_content_v017
WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.trace_content_v017)
    AND cityHash64(tenant_id, project_id, trace_id, field, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, field, processed_at) FROM {db}.trace_content
        WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.trace_content_v017)
    );

DROP TABLE IF EXISTS {db}.trace_content_v017 {on_cluster} SYNC;
