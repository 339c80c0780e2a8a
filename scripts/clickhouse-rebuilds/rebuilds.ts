import type { RebuiltTable, TableRebuild } from './table-rebuild.js';

/**
 * The table rebuilds of ClickHouse migrations 009, 010, 017 and 019: each table's definition as that
 * migration leaves it. The statements are written into the migration files by
 * `npm run generate:rebuilds`; the files are what runs.
 */

const KEY = ['tenant_id', 'project_id', 'timestamp', 'trace_id', 'span_id', 'inserted_at'];
const ORDER = 'ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)';
const TTL = 'TTL toDateTime(timestamp) + INTERVAL 90 DAY';
const ENGINE = 'ENGINE = {replicated}ReplacingMergeTree(inserted_at)';

/** The per-span event tables' columns; `codecs` adds 010's Delta and T64 codecs. */
function eventColumns(table: 'generation' | 'tool' | 'error', codecs: boolean): string[] {
  const delta = codecs ? ' CODEC(Delta, LZ4)' : '';
  const t64 = codecs ? ' CODEC(T64, LZ4)' : '';
  const head = [
    'tenant_id LowCardinality(String)',
    'project_id LowCardinality(String)',
    `timestamp DateTime64(3, 'UTC')${delta}`,
    'actor LowCardinality(String)',
    'surface LowCardinality(String)',
    'user_id LowCardinality(String)',
    'api_key_id LowCardinality(String)',
  ];
  const ids = ['trace_id UUID CODEC(LZ4)', 'span_id UInt64 CODEC(LZ4)'];
  const version = "inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)";
  switch (table) {
    case 'generation':
      return [
        ...head,
        'model LowCardinality(String)',
        'provider LowCardinality(String)',
        ...ids,
        'duration_ms Float64',
        `input_tokens UInt64${t64}`,
        `output_tokens UInt64${t64}`,
        `cached_input_tokens UInt64${t64}`,
        `cache_write_input_tokens UInt64 DEFAULT 0${t64}`,
        'tps Nullable(Float64)',
        'error UInt8',
        version,
      ];
    case 'tool':
      return [...head, 'tool LowCardinality(String)', 'agent_name LowCardinality(String)', ...ids, 'duration_ms Float64', `output_tokens UInt64${t64}`, 'error UInt8', version];
    case 'error':
      return [...head, 'span_name LowCardinality(String)', ...ids, version];
  }
}

const EVENT_TABLES = [
  ['event_generation_completed', 'generation'],
  ['event_tool_called', 'tool'],
  ['event_span_errored', 'error'],
] as const;

/** 009: trace_id as UUID and span_id as UInt64 (from text, or as they are when already converted). */
const toIds = {
  trace_id: 'toUUID(trace_id)',
  span_id: "if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id))))",
};

export const rebuild009: TableRebuild = {
  suffix: 'v009',
  // Only the old data (text ids) needs carrying over; a half-made copy under the name has UUID ids.
  carryOverOnly: "toTypeName(span_id) = 'String'",
  tables: EVENT_TABLES.map(([table, kind]): RebuiltTable => ({
    table,
    columns: eventColumns(kind, false),
    clauses: [ENGINE, 'PARTITION BY toYYYYMM(timestamp)', ORDER, TTL],
    key: KEY,
    convert: toIds,
  })),
};

export const rebuild010: TableRebuild = {
  suffix: 'v010',
  tables: EVENT_TABLES.map(([table, kind]): RebuiltTable => ({
    table,
    columns: eventColumns(kind, true),
    clauses: [ENGINE, 'PARTITION BY toDate(timestamp)', ORDER, TTL, 'SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1'],
    key: KEY,
  })),
};

/**
 * 017: trace_content (clickhouse/014, with 015's retention columns and TTL) in granules of
 * TRACE_CONTENT_GRANULE rows instead of 8192, so reading a few traces by the key, or the rows the
 * text index picks, reads few rows.
 */
export const TRACE_CONTENT_GRANULE = 256;

/** A row's retention (clickhouse/015): its project's setting when the row is written. */
const retentionDefault = (column: 'analytics_days' | 'content_days') =>
  `${column} UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', '${column}', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', '${column}', CAST(tenant_id, 'String'), ''), toUInt8(90))`;
const RETENTION_COLUMNS = [retentionDefault('analytics_days'), retentionDefault('content_days')];

export const rebuild017: TableRebuild = {
  suffix: 'v017',
  tables: [
    {
      table: 'trace_content',
      columns: [
        'tenant_id LowCardinality(String)',
        'project_id LowCardinality(String)',
        'trace_id String',
        'field LowCardinality(String)',
        "timestamp DateTime64(3, 'UTC')",
        'text String CODEC(ZSTD(3))',
        'text_norm String CODEC(ZSTD(3))',
        "processed_at DateTime64(3, 'UTC') DEFAULT now64(3)",
        ...RETENTION_COLUMNS,
      ],
      indexes: ['INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))'],
      clauses: [
        'ENGINE = {replicated}ReplacingMergeTree(processed_at)',
        'PARTITION BY toYYYYMM(timestamp)',
        'ORDER BY (tenant_id, project_id, trace_id, field)',
        // Search text is content: it goes with the project's content retention (clickhouse/015).
        'TTL toDateTime(timestamp) + toIntervalDay(content_days)',
        `SETTINGS index_granularity = ${TRACE_CONTENT_GRANULE}`,
      ],
      key: ['tenant_id', 'project_id', 'trace_id', 'field', 'processed_at'],
      version: 'processed_at',
    },
  ],
};

/**
 * 019: traces (clickhouse/003, with 005's low-cardinality columns, 015's retention columns and TTLs
 * and 018's preview flag) in granules of TRACES_GRANULE rows instead of 8192, so reading a page of
 * summaries by trace id (a search's candidates) reads few rows around each id.
 */
export const TRACES_GRANULE = 256;

/** A content column of traces: emptied past the project's content retention (clickhouse/015). */
const contentColumn = (definition: string) => `${definition} TTL toDateTime(timestamp) + toIntervalDay(content_days)`;

export const rebuild019: TableRebuild = {
  suffix: 'v019',
  tables: [
    {
      table: 'traces',
      columns: [
        'tenant_id String',
        'project_id String',
        'trace_id String',
        'otel_trace_id String',
        "timestamp DateTime64(3, 'UTC')",
        'service_name LowCardinality(String)',
        'agent_name LowCardinality(String)',
        'thread_id String',
        'release LowCardinality(String)',
        contentColumn('agent_input_display String'),
        contentColumn('agent_input Nullable(String)'),
        contentColumn('agent_output Nullable(String)'),
        contentColumn('tool_calls String'),
        'interaction String',
        'has_error UInt8',
        'total_duration_ms Float64',
        'span_count UInt32',
        'total_tokens UInt64',
        'error_count UInt32',
        'models_used Array(LowCardinality(String))',
        'stats_tool_calls String',
        'estimated_cost_usd Nullable(Float64)',
        'preview UInt8 DEFAULT 0',
        "processed_at DateTime64(3, 'UTC') DEFAULT now64(3)",
        ...RETENTION_COLUMNS,
      ],
      clauses: [
        'ENGINE = {replicated}ReplacingMergeTree(processed_at)',
        'PARTITION BY toYYYYMM(timestamp)',
        'ORDER BY (tenant_id, project_id, trace_id)',
        'TTL toDateTime(timestamp) + toIntervalDay(analytics_days)',
        `SETTINGS index_granularity = ${TRACES_GRANULE}`,
      ],
      key: ['tenant_id', 'project_id', 'trace_id', 'processed_at'],
      version: 'processed_at',
    },
  ],
};

/** Migration file → its rebuild. */
export const REBUILD_MIGRATIONS: Record<string, TableRebuild> = {
  '009_event_ids_uuid_uint64.sql': rebuild009,
  '010_event_partitions_by_day.sql': rebuild010,
  '017_trace_content_granules.sql': rebuild017,
  '019_traces_granules.sql': rebuild019,
};
