-- What full-text search reads (docs/search.md): a trace's text, one row per (trace, field), written
-- when the trace settles (src/spans/trace-content.ts) and replaced when it settles again.
--
-- `text` is the display form (NFKC, white space collapsed), `text_norm` the same text lower-cased
-- code point by code point, so both have the same code points at the same positions: a match is
-- found in text_norm and its snippet cut from text. The text index (bigrams of text_norm) only
-- narrows which rows are read; every match is then checked exactly (LIKE on text_norm), so the
-- index can never add or lose an answer. Bigrams because words of two characters are words in
-- Chinese, Japanese and Korean, where no space separates them.
--
-- Keyed like the traces table (tenant, project, trace) and sharded with it, so a trace's rows sit
-- together, a shard answers for its own traces, and a deletion by trace or project reaches them.
-- `timestamp` is the trace's: retention and the trace list's time filters apply to it.
CREATE TABLE IF NOT EXISTS {db}.trace_content {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;
