/**
 * Every environment variable Lookout reads, once: its kind of value (bounds included), default and
 * meaning, grouped by the module that reads it. `loadConfig` (config.ts) reads the environment
 * through this schema, and docs/configuration.md's tables are written from it
 * (`npm run generate:config-docs`; a unit test fails when the committed page differs).
 *
 * Settings that only tests and benchmarks change are not here: they are options of the service
 * they start (harness-options.ts).
 */
import { setting, type SettingSchema } from '../platform/settings/setting.js';
import { choice, decimal, httpUrl, identifier, integer, list, matching, onOff, text, url } from '../platform/settings/setting-kinds.js';

/** What a process does (LOOKOUT_ROLES): serve the API, accept spans, run background work. */
export type Role = 'api' | 'ingest' | 'worker';
export const ROLES: readonly Role[] = ['api', 'ingest', 'worker'];

const port = integer({ max: 65535 });
const ms = (min = 0) => integer({ min, unit: 'milliseconds' });
const bytes = integer({ unit: 'bytes' });

const server = {
  PORT: setting(port, { default: 8080, doc: 'HTTP port (REST under `/api`, OTLP at `/v1/traces` and `/v1/logs`, MCP at `/mcp`, dashboard at `/`); `0`: any free port' }),
  HOST: setting(text, { default: '0.0.0.0', doc: 'Listen address' }),
  METRICS_PORT: setting(port, { default: 9464, doc: 'Port of the Prometheus listener (`GET /metrics`, its own listener apart from the API); `0`: no listener ([operations.md](operations.md#metrics))' }),
  METRICS_HOST: setting(text, { default: '127.0.0.1', doc: 'Listen address of the metrics listener (it has no key: keep it private)' }),
  LOOKOUT_ROLES: setting(list(choice(ROLES), ROLES.join(', ')), {
    default: [...ROLES],
    doc: 'What this process does: `api` (REST, MCP, dashboard), `ingest` (`/v1/traces`, `/v1/logs` and OTLP/gRPC), `worker` (processing traces, hooks, outbox relay, monitors, price refresh) ([settling.md](settling.md))',
  }),
  DATA_DIR: setting(text, { default: './.data', doc: 'Where the embedded stores keep their data (`postgres/`, `clickhouse/`) and the generated `secret.key`' }),
  LOG_LEVEL: setting(choice(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']), { default: 'info', doc: 'Logs are JSON lines on stdout, with the `Authorization` header redacted' }),
  LOOKOUT_MIGRATE: setting(onOff, {
    default: true,
    doc: '`on`: apply pending migrations of both stores at start, under a PostgreSQL advisory lock. `off`: only check, and refuse to start while any are pending (run `npm run admin -- migrate` as a separate step)',
  }),
  JSON_BODY_LIMIT: setting(matching(/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i, 'a size in bytes, or with a unit (512kb, 1mb)'), { default: '1mb', doc: 'Largest JSON body of the REST API (413 beyond)' }),
};

const stores = {
  DATABASE_URL: setting(url(['postgres:', 'postgresql:'], 'a postgres:// URL'), {
    secret: true,
    doc: 'PostgreSQL server (`postgres://user:pass@host:5432/db`); unset: embedded PostgreSQL in `$DATA_DIR/postgres`',
  }),
  CLICKHOUSE_URL: setting(httpUrl, { secret: true, doc: 'ClickHouse server (HTTP interface, `http://host:8123`); unset: the in-process engine in `$DATA_DIR/clickhouse`' }),
  CLICKHOUSE_USER: setting(text, { default: 'default', doc: 'ClickHouse user' }),
  CLICKHOUSE_PASSWORD: setting(text, { default: '', secret: true, doc: 'ClickHouse password' }),
  CLICKHOUSE_DATABASE: setting(identifier, { default: 'lookout', doc: 'Database holding every Lookout table' }),
  CLICKHOUSE_PARAM_BINDING: setting(choice(['literal', 'server']), {
    defaultText: 'by backend',
    doc: '`literal`: statement values rendered as typed literals (the default on the in-process engine, whose Node binding runs every statement with query parameters one at a time process-wide); `server`: `{name:Type}` query parameters (the default on a ClickHouse server)',
  }),
  CLICKHOUSE_WORKLOAD_ANALYTICS: setting(identifier, {
    doc: 'ClickHouse server only: the `workload` setting of the analytics lane\'s statements (a workload the server defines with `CREATE WORKLOAD`). Every statement on a server also carries `priority` by lane: ingest 1, system and interactive 2, analytics 3 (lower runs first)',
  }),
  CLICKHOUSE_WORKLOAD_INTERACTIVE: setting(identifier, { doc: 'The same for the interactive lane' }),
  CLICKHOUSE_WORKLOAD_INGEST: setting(identifier, { doc: 'The same for ingestion' }),
  CLICKHOUSE_CLUSTER: setting(identifier, { doc: 'Cluster name: `*_local` Replicated tables and Distributed tables under the usual names, created `ON CLUSTER` ([scale-out.md](scale-out.md))' }),
  CLICKHOUSE_INSERT_QUORUM: setting(matching(/^(auto|\d+)$/, 'auto or a number of replicas'), {
    default: 'auto',
    doc: 'With a cluster: replicas of a shard that must hold an insert before it is acknowledged (`auto` = a majority, a number, or `0` = none); not sent without replication',
  }),
  CLICKHOUSE_CLUSTER_REPLICATED: setting(onOff, {
    default: true,
    doc: 'With a cluster: `off` makes the `*_local` tables plain MergeTree-family tables (shards without replicas, no Keeper) migrated node by node instead of `ON CLUSTER`; needs `CLICKHOUSE_CLUSTER_NODES` ([scale-out.md](scale-out.md), "Shards without replicas")',
  }),
  CLICKHOUSE_CLUSTER_NODES: setting(list(matching(/^https?:\/\/[^\s/]+\/?$/, 'node URL'), 'http(s) URLs of nodes (scheme, host and port)'), {
    doc: 'With `CLICKHOUSE_CLUSTER_REPLICATED=off`: every node\'s HTTP URL (`http://ch1:8123,http://ch2:8123`); migrations apply each statement to every node before the next and record a file on every node once it ran everywhere. Refused on a replicated cluster, which migrates `ON CLUSTER`',
  }),
};

const keys = {
  LOOKOUT_BOOTSTRAP_KEY: setting(text, { secret: true, defaultText: 'random', doc: 'The admin key created with tenant `default` when the store is empty (printed once when random)' }),
  LOOKOUT_SYSTEM_KEY: setting(text, { secret: true, doc: 'Operator credential for `POST /api/tenants`; unset: that route answers 404' }),
  LOOKOUT_SECRET_KEY: setting(text, {
    secret: true,
    doc: 'Key that encrypts stored integration secrets (code-host and ticket-tracker tokens, webhook signing secrets); unset: a random key kept in `$DATA_DIR/secret.key`. Every process of one deployment must share it',
  }),
};

const ingest = {
  OTLP_MAX_BYTES: setting(bytes, {
    default: 20 * 1024 * 1024,
    doc: 'Largest decompressed OTLP request: 413 beyond, gzip included (inflated as a stream and stopped at the limit); over gRPC the largest message, before and after `grpc-encoding: gzip` inflation (`RESOURCE_EXHAUSTED` beyond)',
  }),
  OTLP_GRPC_PORT: setting(port, { default: 4317, doc: 'Port of OTLP/gRPC (`TraceService/Export`), served by processes with the `ingest` role; `0` turns it off ([ingestion.md](ingestion.md#otlpgrpc))' }),
  OTLP_GRPC_HOST: setting(text, { defaultText: '`HOST`', doc: 'Listen address of OTLP/gRPC' }),
  INGEST_MAX_INFLIGHT_BYTES: setting(bytes, {
    default: 256 * 1024 * 1024,
    doc: 'Memory budget of OTLP requests in progress: each is charged, as it reads, for its body, what it inflates to and what that decodes into (8× the decompressed size for protobuf, 7× for JSON; a gzip body with a Content-Length is charged up front as if it inflated 8×, and for any excess as it inflates); beyond it ingestion answers 429 `rate_limited` + `Retry-After`, over gRPC `UNAVAILABLE` with a `RetryInfo` (a request alone in flight may exceed it). A gRPC message arrives whole and is charged on arrival',
  }),
  INGEST_MAX_QUEUE_MS: setting(ms(), {
    default: 2000,
    doc: 'When the longest-waiting OTLP request has waited longer for a compute worker to decode it, ingestion answers 429 `rate_limited` + `Retry-After` (gRPC `UNAVAILABLE`) until the queue shortens, rather than queue more decoding than an exporter waits for; `0`: no bound ([operations.md](operations.md#the-compute-pool-and-ingest-decoding))',
  }),
  INGEST_MAX_FUTURE_SKEW_MS: setting(ms(), { default: 24 * 3_600_000, doc: 'How far past the server clock a span may start; later spans are rejected through `partial_success`' }),
  INGEST_FLUSH_MS: setting(ms(), { default: 20, doc: 'How long the writer waits to coalesce concurrent requests into one insert' }),
  INGEST_FLUSH_MIN_ROWS: setting(integer({ min: 0 }), {
    default: 2000,
    doc: 'Under a steady stream of requests (some already waiting as a flush ends), the spans the next flush waits for, at most until `INGEST_FLUSH_INTERVAL_MS` after the previous one started, so flushes are fewer and larger. A sender that waits for each answer before sending again is never held back. `0`: each flush starts as the previous one ends ([operations.md](operations.md#cpu))',
  }),
  INGEST_FLUSH_INTERVAL_MS: setting(ms(), { default: 500, doc: 'The longest a flush waits for `INGEST_FLUSH_MIN_ROWS`, counted from the start of the previous one' }),
  INGEST_FLUSH_CATCH_UP_LAG_MS: setting(ms(), {
    default: 2000,
    doc: 'While the oldest trace due for processing has waited longer (the settle lag), a lone request waits 200 ms (not `INGEST_FLUSH_MS`) for others to share its flush, and a steady stream for three times `INGEST_FLUSH_MIN_ROWS` spans at most twice `INGEST_FLUSH_INTERVAL_MS`: fewer, larger inserts leave the CPU to processing, and answers come up to about a second later while it lasts; `0`: off ([operations.md](operations.md#cpu))',
  }),
  INGEST_BATCH_ROWS: setting(integer({ min: 1 }), { default: 50_000, doc: 'Largest coalesced insert, in rows' }),
  TRACE_MAX_SPANS: setting(integer({ min: 1 }), {
    default: 100_000,
    doc: 'Spans stored per trace; later spans of that trace are rejected through OTLP `partial_success` naming the trace ([traces.md](traces.md)). Also the log records kept per trace (`POST /v1/logs`, [ingestion.md](ingestion.md#log-records-post-v1logs))',
  }),
};

const settle = {
  TRACE_SETTLE_MS: setting(ms(), { default: 3000, doc: 'A trace is processed this long after its last span, once its root span is in' }),
  TRACE_MAX_WAIT_MS: setting(ms(), { default: 60_000, doc: '...or this long after its first span, root or not' }),
  SETTLE_LEASE_MS: setting(ms(1), {
    default: 60_000,
    doc: 'How long a trace claimed for processing stays with a process that stopped renewing the claim (crashed); then any process processes it ([settling.md](settling.md))',
  }),
  DELETION_LEASE_MS: setting(ms(1000), {
    default: 60_000,
    doc: 'How long a deletion job stays with a process that stopped renewing its claim (crashed); then any process resumes it ([data-lifecycle.md](data-lifecycle.md#deletion))',
  }),
  SETTLE_MAX_LAG_MS: setting(ms(), {
    default: 30_000,
    doc: 'When the oldest trace due for processing has waited longer, ingestion answers 503 `overloaded` + `Retry-After` until processing catches up; `0`: no bound ([operations.md](operations.md#settle-lag-and-back-pressure))',
  }),
  SETTLE_CACHE_MAX_BYTES: setting(bytes, {
    defaultText: 'twice `INGEST_MAX_INFLIGHT_BYTES`, 4–256 MiB',
    doc: 'Span rows the settler keeps in memory for open traces, so it can summarize them without reading them back; past it, traces are read back from ClickHouse (slower settling, bounded memory)',
  }),
  TRACE_REGISTRY_WINDOW_HOURS: setting(decimal({ min: 1, unit: 'hours' }), {
    defaultText: 'unset (the spans\' lifetime)',
    doc: 'How long the record of which traces have spans keeps a trace after its last flush and its latest span\'s start. Unset, exact for every trace and one PostgreSQL row per trace for 90 days; set it at high new-trace rates to bound that table to about rate × (window + 1 h) rows, trading exactness for a trace id that comes back after a longer silence ([operations.md](operations.md), "The stored-trace record")',
  }),
};

const compute = {
  COMPUTE_THREADS: setting(integer(), {
    defaultText: 'cores − 1, at least 2',
    doc: 'Worker threads for CPU-heavy work (OTLP decoding, row building, trace summaries, trace detail). From 2 up, decoding of ingest requests gets half of them (rounded up) and settling and reads the rest, so neither waits behind the other; `1` shares one worker, settling and reads first; `0` runs it all on the event loop',
  }),
  COMPUTE_HEAP_MB: setting(integer({ unit: 'MB' }), {
    default: 0,
    doc: 'Old-generation heap cap of each compute worker; `0`: V8\'s default. A task that outgrows it ends only its worker: the pool starts a new one and the request answers 503 `overloaded` + `Retry-After` (a settle round that fails is retried). A step that cannot stop half-way (turning an OTLP/JSON body into text and parsing it) is refused up front, with the same 503, when the worker could not hold it at worst — 5–9× the body for GenAI spans — so no body can push a worker past its cap inside such a step, which would abort the whole process; protobuf decodes in steps that stop. Lowers peak memory under load; too low a cap makes the biggest traces fail to settle (a 100,000-span chain settles and reads within 192). Each worker\'s young generation is 96 MB uncapped with one thread, V8\'s 48 MB default with two or more (each keeps to one kind of task), and at most a quarter of the cap (at least 48 MB) when set',
  }),
};

const queries = {
  QUERY_TIMEOUT_SECONDS: setting(decimal({ unit: 'seconds' }), { default: 15, doc: 'Time limit of each analytics statement, waiting for a slot included (504 `query_timeout` beyond)' }),
  EXPORT_TIMEOUT_SECONDS: setting(decimal({ unit: 'seconds' }), {
    default: 600,
    doc: 'Time limit of one export once it runs (it holds an analytics slot meanwhile); the wait for the slot counts against `QUERY_TIMEOUT_SECONDS`. An export past it is cut off mid-stream ([data-lifecycle.md](data-lifecycle.md#getting-your-data-out))',
  }),
  ANALYTICS_MAX_CONCURRENCY: setting(integer({ min: 1 }), {
    default: 4,
    doc: 'Analytics statements (query, views, MCP, dashboard, the agent-name list) running at once; on the in-process engine also its number of analytics connections',
  }),
  ANALYTICS_MAX_PER_TENANT: setting(integer({ min: 1 }), { default: 2, doc: '...of which one tenant may run at once; the others wait' }),
  ANALYTICS_MAX_QUEUE: setting(integer(), {
    default: 64,
    doc: 'Analytics statements waiting for a slot; beyond it 429 `rate_limited` with `Retry-After`. Ingestion and trace processing never wait here ([architecture.md](architecture.md))',
  }),
  ANALYTICS_NICE: setting(integer({ max: 19 }), {
    default: 10,
    doc: 'In-process engine only: the OS priority (nice, 0–19) its threads take while they run an analytics statement, so trace reads, ingestion and settling go ahead of heavy queries for the cores while the queries still get what the rest leaves; `0`: the same priority as everything else. Takes effect where the process may change its threads\' priority (root, or the `CAP_SYS_NICE` capability); elsewhere it changes nothing. A ClickHouse server uses `priority` and workloads instead',
  }),
  INTERACTIVE_MAX_CONCURRENCY: setting(integer({ min: 1 }), {
    default: 2,
    doc: 'The interactive lane: cheap bounded reads a person waits on (trace detail and its page of spans, trace lists, lookups by id) running at once, apart from analytics, so opening a trace never waits behind heavy queries of the same tenant; on the in-process engine also its number of connections',
  }),
  INTERACTIVE_MAX_PER_TENANT: setting(integer({ min: 1 }), { default: 2, doc: '...of which one tenant may run at once' }),
  INTERACTIVE_MAX_QUEUE: setting(integer(), {
    default: 64,
    doc: 'Interactive reads waiting for a slot; beyond it 429 `rate_limited` with `Retry-After`. Waiting counts inside `QUERY_TIMEOUT_SECONDS` (504 `query_timeout`), as for analytics',
  }),
};

const faults = {
  INGEST_TIMEOUT_MS: setting(ms(100), {
    default: 5000,
    doc: 'An OTLP request whose spans are not stored within this is answered 503 `store_unavailable` + `Retry-After` (well under the 10 s default timeout of OpenTelemetry exporters)',
  }),
  REQUEST_TIMEOUT_SECONDS: setting(integer({ min: 1, unit: 'seconds' }), {
    defaultText: '`QUERY_TIMEOUT_SECONDS` + 10',
    doc: 'Any other request not answered within this is answered 503 `store_unavailable` + `Retry-After`',
  }),
  POSTGRES_STATEMENT_TIMEOUT_MS: setting(ms(100), { default: 15_000, doc: '`statement_timeout` of the service\'s PostgreSQL pool (migrations run without it)' }),
  POSTGRES_STARTUP_WAIT_MS: setting(ms(), { default: 30_000, doc: 'With `DATABASE_URL`: how long start-up retries a PostgreSQL that does not answer yet' }),
  CLICKHOUSE_STARTUP_WAIT_MS: setting(ms(), {
    default: 30_000,
    doc: 'With `CLICKHOUSE_URL`: how long start-up retries a ClickHouse server that does not answer yet (connection refused, reset or timed out), with back-off from 0.25 s doubling to 5 s; `0` fails at once. A wrong password or any other error fails at once',
  }),
  READY_PROBE_TIMEOUT_MS: setting(ms(100), { default: 2000, doc: 'Each store\'s probe in `/readyz`' }),
  DATA_DIR_MIN_FREE_MB: setting(integer({ unit: 'MB' }), {
    default: 512,
    doc: 'Below this much free space under `DATA_DIR` (when a store is embedded) `/readyz` answers 503 and ingestion refuses with 503',
  }),
  KEY_CACHE_SECONDS: setting(integer({ unit: 'seconds' }), { default: 60, doc: 'While PostgreSQL is unreachable, an API key it verified within this long still verifies; `0` turns it off' }),
  SHUTDOWN_TIMEOUT_MS: setting(ms(1000), {
    default: 10_000,
    doc: 'The graceful shutdown: half for requests in flight, the rest for the last flush, settling and the outbox; closing the stores adds at most ~7 s',
  }),
};

const workspace = {
  MONITOR_LEARNING_MIN_TRACES: setting(integer(), { default: 50, doc: 'Traces a monitor observes before it leaves `learning`' }),
  PRICES_REFRESH_URL: setting(httpUrl, {
    doc: 'Optional URL of a newer genai-prices catalog; the bundled one is used until a fetch succeeds, and the last good one is kept ([cost.md](cost.md)). With several processes one leader fetches it and shares it through PostgreSQL ([settling.md](settling.md))',
  }),
  LINEAR_API_URL: setting(httpUrl, { default: 'https://api.linear.app/graphql', doc: 'Linear GraphQL endpoint (ticket tracker, [issues.md](issues.md))' }),
  CODE_HOST_API_URL: setting(httpUrl, { default: 'https://api.github.com', doc: 'Code-host API used by the connection health check ([code-host.md](code-host.md))' }),
};

const webhooks = {
  LOOKOUT_PUBLIC_URL: setting(httpUrl, {
    doc: 'The dashboard\'s public address (`https://lookout.example.com`); webhook payloads link to issues with it (unset: their `url` is null)',
  }),
  LOOKOUT_WEBHOOK_ALLOW_PRIVATE: setting(onOff, {
    default: false,
    doc: '`on`: webhook URLs may be loopback, private or link-local addresses (self-hosted receivers, tests); otherwise refused ([webhooks.md](webhooks.md#where-webhooks-may-point))',
  }),
  LOOKOUT_WEBHOOK_CONCURRENCY: setting(integer({ min: 1 }), { default: 4, doc: 'Webhook attempts in flight per endpoint, all processes together' }),
};

export interface ConfigGroup {
  /** The reference's heading. */
  title: string;
  /** The part of src/ that reads these settings. */
  module: string;
  /** A sentence under the heading (Markdown). */
  intro?: string;
  settings: SettingSchema;
}

/** The reference's sections, in its order. */
export const CONFIG_GROUPS: readonly ConfigGroup[] = [
  { title: 'Server', module: 'src/app', settings: server },
  { title: 'Stores', module: 'src/platform/postgres, src/platform/clickhouse', settings: stores },
  { title: 'Keys and secrets', module: 'src/tenancy, src/platform/secret-box', settings: keys },
  { title: 'Ingestion', module: 'src/ingest', settings: ingest },
  { title: 'Settling', module: 'src/ingest/settle', intro: 'How and when a trace is processed after its spans arrive ([settling.md](settling.md)).', settings: settle },
  { title: 'Compute pool', module: 'src/platform/compute', settings: compute },
  { title: 'Queries', module: 'src/analytics, src/platform/clickhouse/sql', settings: queries },
  { title: 'When a store fails', module: 'src/platform, src/ingest', intro: 'What each bound does is described in [operations.md](operations.md#when-a-store-fails).', settings: faults },
  { title: 'Monitors, prices and integrations', module: 'src/workspace, src/cost', settings: workspace },
  { title: 'Webhooks', module: 'src/workspace/webhooks', settings: webhooks },
];

/** Every variable, keyed by name: what `loadConfig` reads. */
export const CONFIG_SCHEMA = { ...server, ...stores, ...keys, ...ingest, ...settle, ...compute, ...queries, ...faults, ...workspace, ...webhooks };
