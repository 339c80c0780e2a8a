import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createClient, parseError, type ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import { createChdbConnection } from 'chdb/connection';
import { clusterInsertSettings } from './clickhouse-layout.js';
import { StoreUnavailableError } from '../http/errors.js';
import { clickhouseUnavailable } from '../store-errors.js';
import { AnalyticsGate, DEFAULT_GATE_LIMITS, DEFAULT_INTERACTIVE_LIMITS, type GateLimits } from './sql/analytics-gate.js';
import type { ParamBinding } from './sql/compile.js';
import { StatementStats } from './sql/statement-stats.js';
import type { Fragment } from './sql/fragment.js';
import { bodyFormat, StatementRunner, type StatementObserver, type GatedLane, type InsertSettings, type LaneClients, type LaneControls, type RawInsert, type ReadOptions, type StreamOptions, type WriteLane } from './sql/statement-runner.js';
import type { RawStream, StreamFormat, StreamPart } from './sql/statement-stream.js';
import { typedLiteral } from './sql/typed-literal.js';
import { insertOnEveryReplica } from './replica-insert.js';

/**
 * Settings every statement carries, on both backends (the server client's defaults; the embedded
 * engine's clients and raw inserts below). The per-span event tables are partitioned by day
 * (clickhouse/010): one flush may hold spans from any day ingestion accepts (90 days back to
 * INGEST_MAX_FUTURE_SKEW_MS ahead), and a migration's copy holds every day stored. Past
 * `max_partitions_per_insert_block` (100) partitions in one block the engine would refuse the whole
 * insert (and the exporter's retries, or the service's start-up, with it); it logs a warning instead.
 */
export const INSERT_SETTINGS = { throw_on_max_partitions_per_insert_block: 0 } as const;

/**
 * An open ClickHouse. Modules speak to it only through read / command / insert (the SQL layer in
 * clickhouse-sql/); `client` is the driver underneath, for src/platform alone (a test keeps it so).
 */
export interface ClickHouseStore {
  /** The system lane's driver (migrations, tests); modules use read / command / insert. */
  client: ClickHouseClient;
  /** Runs a SELECT in a lane (statement-runner.ts). */
  read<Row = Record<string, unknown>>(statement: Fragment, options: ReadOptions): Promise<Row[]>;
  /** Runs a statement without result rows (DDL, INSERT … SELECT, ALTER). */
  command(statement: Fragment, lane: WriteLane): Promise<void>;
  /** Runs a SELECT in a lane and returns its JSONEachRow answer as raw, unparsed bytes (for the compute pool). */
  readBytes(statement: Fragment, options: ReadOptions): Promise<Buffer>;
  /** Runs a SELECT on a gated lane and streams its answer in a ClickHouse output format (statement-stream.ts); the caller consumes or destroys it. */
  stream(statement: Fragment, format: StreamFormat, options: StreamOptions): Promise<Readable>;
  /** Runs SELECTs one after another on one slot of a gated lane and streams their answers as one (an export read in slices; statement-runner.ts). */
  streamParts(parts: readonly StreamPart[], options: StreamOptions): Promise<Readable>;
  /** Inserts JSONEachRow rows into a table named by `table()`. */
  insert(table: string, rows: readonly object[], lane: WriteLane): Promise<void>;
  /** Inserts rows already serialized as JSONEachRow lines (one per row) into a table named by `table()`. */
  insertLines(table: string, lines: readonly string[], lane: WriteLane): Promise<void>;
  /**
   * Inserts a body given as byte parts of whole lines into a table named by `table()`: JSONCompactEachRow
   * arrays of `columns`' values when given, else JSONEachRow objects.
   */
  insertBody(table: string, parts: readonly Uint8Array[], lane: WriteLane, columns?: readonly string[], settings?: InsertSettings): Promise<void>;
  /** Whether the store answers within `timeoutMs` (default 2 s): the readiness probe. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Tells `observer` of every statement from now on (the service's metrics); null stops. */
  observe(observer: StatementObserver | null): void;
  /** How values are bound: typed literals on the embedded engine, server parameters on a server. */
  binding: ParamBinding;
  /** The analytics lane's admission (analytics-gate.ts); the same as gates.analytics. */
  gate: AnalyticsGate;
  /** Each gated lane's admission: analytics, and interactive (cheap trace reads). */
  gates: Record<GatedLane, AnalyticsGate>;
  /** The database every Lookout table lives in; table names are always qualified with it. */
  database: string;
  /** Set when the store is a cluster: migrations add ON CLUSTER and Replicated engines. */
  cluster: string | null;
  /** On a cluster: Replicated `_local` tables under ON CLUSTER DDL (true), or plain ones migrated node by node. */
  replicated: boolean;
  /** On a cluster without replication: every node's URL, where migrations apply each statement. */
  nodes: readonly string[];
  /** A store on one node of the cluster (its own tables, no cluster settings), for migrations; the caller closes it. */
  openNode(url: string): Promise<ClickHouseStore>;
  /**
   * Inserts rows into a table kept whole on every node (clickhouse-layout.ts NODE_TABLES), on every
   * node: the one store; each node of a cluster without replication; on a replicated cluster each
   * replica the cluster's configuration lists (remote(), as Lookout's own user), since such tables do
   * not replicate.
   */
  insertEverywhere(table: string, rows: readonly Record<string, string | number>[]): Promise<void>;
  embedded: boolean;
  /** A fully qualified, quoted table name. `name` comes from code, never from callers. */
  table(name: string): string;
  close(): Promise<void>;
}

export interface ClickHouseOptions {
  url: string | null;
  user: string;
  password: string;
  database: string;
  cluster: string | null;
  /** insert_quorum on a cluster ('auto', a count, or '0'); not applied without replication. */
  insertQuorum?: string;
  /** On a cluster: Replicated tables and ON CLUSTER DDL (default true). */
  replicated?: boolean;
  /** On a cluster without replication: every node's URL (CLICKHOUSE_CLUSTER_NODES). */
  nodes?: readonly string[];
  dataDir: string;
  /** Default: `literal` on the embedded engine, `server` on a server (CLICKHOUSE_PARAM_BINDING). */
  paramBinding?: ParamBinding | null;
  analytics?: GateLimits;
  /** The interactive lane's bounds (INTERACTIVE_MAX_*). */
  interactive?: GateLimits;
  queryTimeoutSeconds?: number;
  controls?: LaneControls;
  /** Where statements per kind and the engine's counters are written on close (benchmarks). */
  statsFile?: string | null;
  /** On a server: how long one HTTP request of each lane may take before the client gives up (default: defaultRequestTimeouts). */
  requestTimeoutsMs?: Partial<RequestTimeouts>;
  /**
   * On a server: how long opening retries a server that is not reachable yet, with back-off
   * (CLICKHOUSE_STARTUP_WAIT_MS); 0 fails at once.
   */
  startupWaitMs?: number;
  /** Where the start-up retries are logged. */
  logger?: Logger;
}

/** Client-side bounds of one request to a ClickHouse server, per lane and for the readiness probe. */
export interface RequestTimeouts {
  ingest: number;
  system: number;
  read: number;
  probe: number;
}

/**
 * Defaults: ingest short, so a server that stops answering fails a flush (and its requests get 503)
 * within seconds rather than a minute; reads a little past the query time limit the server enforces
 * itself; the system lane (migrations, backfills) long; the probe 2 s.
 */
export function defaultRequestTimeouts(queryTimeoutSeconds: number): RequestTimeouts {
  return { ingest: 10_000, system: 60_000, read: (queryTimeoutSeconds + 5) * 1000, probe: 2_000 };
}

/**
 * Opens ClickHouse: the server at CLICKHOUSE_URL, else chdb's in-process engine plugged into the
 * same @clickhouse/client. chdb ignores the client's `database` option, so every statement names
 * its database explicitly instead.
 *
 * On chdb each lane gets its own connections to the one data directory — system one, ingest two
 * (writes and settling reads), analytics and interactive one per slot: a chdb connection
 * runs one statement at a time, connections run in parallel.
 */
export async function openClickHouse(options: ClickHouseOptions): Promise<ClickHouseStore> {
  const limits = options.analytics ?? DEFAULT_GATE_LIMITS;
  const replicated = options.cluster ? (options.replicated ?? true) : false;
  const interactiveLimits = options.interactive ?? DEFAULT_INTERACTIVE_LIMITS;
  let clients: LaneClients;
  let probe: ClickHouseClient | undefined;
  const rawInserts = new Map<ClickHouseClient, RawInsert>();
  const rawStreams = new Map<ClickHouseClient, RawStream>();
  const timeouts = { ...defaultRequestTimeouts(options.queryTimeoutSeconds ?? 15), ...options.requestTimeoutsMs };
  if (options.url) {
    const serverClient = (requestTimeoutMs: number) => createClient({
      url: options.url!,
      username: options.user,
      password: options.password,
      request_timeout: requestTimeoutMs,
      // The embedded engine's defaults, made explicit so both backends answer alike: 64-bit integers
      // as JSON numbers unless a reader asks for exact strings.
      // JSON objects and arrays read into String columns keep their raw text (the `spans` row's
      // attributes, events and resource are written as JSON values, ingest/event-rows.ts; on by
      // default since 23.x, set so an older server fails loudly instead of storing something else).
      clickhouse_settings: {
        date_time_input_format: 'best_effort',
        output_format_json_quote_64bit_integers: 0,
        input_format_json_read_objects_as_strings: 1,
        input_format_json_read_arrays_as_strings: 1,
        ...INSERT_SETTINGS,
      },
    });
    // On a cluster every insert reaches its shard (and a quorum of replicas) before it returns.
    const durable = (client: ClickHouseClient) => (options.cluster ? durableClusterInserts(client, clusterInsertSettings(replicated ? (options.insertQuorum ?? 'auto') : null)) : client);
    // One client per request bound: the lanes share nothing but the server.
    const read = durable(serverClient(timeouts.read));
    clients = {
      ingest: [durable(serverClient(timeouts.ingest))],
      system: [durable(serverClient(timeouts.system))],
      analytics: Array.from({ length: limits.maxConcurrency }, () => read),
      interactive: Array.from({ length: interactiveLimits.maxConcurrency }, () => read),
    };
    probe = serverClient(timeouts.probe);
  } else {
    const dir = path.join(options.dataDir, 'clickhouse');
    fs.mkdirSync(dir, { recursive: true });
    // Parquet exports' files (chdbParquetFile); one a process that stopped mid-export left is of no use.
    const exportDir = path.join(dir, 'exports');
    fs.rmSync(exportDir, { recursive: true, force: true });
    fs.mkdirSync(exportDir, { recursive: true });
    const open = () => {
      // chdb re-exports the Connection type from @clickhouse/client-common, a structurally identical twin
      // of the one @clickhouse/client now bundles; the cast bridges the two declarations.
      const chdb = createChdbConnection({ path: dir });
      const connection = chdb as unknown as NonNullable<Parameters<typeof createClient>[0]>['connection'];
      const client = isolateSessionSettings(createClient({ connection }), INSERT_SETTINGS);
      rawInserts.set(client, async (table, body, columns, settings) => {
        await chdb.chdb.rawInsert({ table: unquotedTable(table), values: body, format: bodyFormat(columns), columns, settings: { ...INSERT_SETTINGS, ...settings } });
      });
      rawStreams.set(client, (query, format) => chdbChunks(chdb.chdb, query, format, exportDir));
      return client;
    };
    clients = {
      system: [open()],
      ingest: [open(), open()],
      analytics: Array.from({ length: limits.maxConcurrency }, open),
      interactive: Array.from({ length: interactiveLimits.maxConcurrency }, open),
    };
  }
  const client = clients.system[0];
  const distinct = [...new Set([...Object.values(clients).flat(), ...(probe ? [probe] : [])])];
  const database = options.database;
  const createDatabase = () =>
    client.command({
      query: `CREATE DATABASE IF NOT EXISTS \`${database}\`${options.cluster && replicated ? ` ON CLUSTER \`${options.cluster}\`` : ''}`,
    });
  try {
    await firstStatement(createDatabase, options.url ? (options.startupWaitMs ?? 0) : 0, options.url ?? '', options.logger);
  } catch (error) {
    for (const each of new Set([...Object.values(clients).flat(), ...(probe ? [probe] : [])])) await each.close().catch(() => {});
    // A server that is not there at start-up says so as plainly as later (store-errors.ts).
    throw clickhouseUnavailable(error);
  }
  const embedded = !options.url;
  const gates = { analytics: new AnalyticsGate(limits), interactive: new AnalyticsGate(interactiveLimits, 'trace reads', 'interactive') };
  const stats = options.statsFile ? new StatementStats(options.statsFile) : null;
  await stats?.start(client);
  const runner = new StatementRunner({
    clients,
    rawInserts,
    rawStreams,
    binding: options.paramBinding ?? (embedded ? 'literal' : 'server'),
    server: !embedded,
    gates,
    queryTimeoutSeconds: options.queryTimeoutSeconds ?? 15,
    controls: options.controls,
    stats,
    probe,
  });
  return {
    client,
    read: <Row>(statement: Fragment, readOptions: ReadOptions) => runner.read<Row>(statement, readOptions),
    command: (statement, lane) => runner.command(statement, lane),
    readBytes: (statement, readOptions) => runner.readBytes(statement, readOptions),
    stream: (statement, format, streamOptions) => runner.stream(statement, format, streamOptions),
    streamParts: (parts, streamOptions) => runner.streamParts(parts, streamOptions),
    insert: (table, rows, lane) => runner.insert(table, rows, lane),
    insertLines: (table, lines, lane) => runner.insertLines(table, lines, lane),
    insertBody: (table, parts, lane, columns, settings) => runner.insertBody(table, parts, lane, columns, settings),
    ping: (timeoutMs) => runner.ping(timeoutMs),
    observe: (observer) => {
      runner.observer = observer;
    },
    binding: runner.binding,
    gate: gates.analytics,
    gates,
    database,
    cluster: options.cluster,
    replicated,
    nodes: options.cluster && !replicated ? (options.nodes ?? []) : [],
    openNode: (url: string) =>
      openClickHouse({ url, user: options.user, password: options.password, database, cluster: null, dataDir: options.dataDir, paramBinding: options.paramBinding, queryTimeoutSeconds: options.queryTimeoutSeconds, requestTimeoutsMs: options.requestTimeoutsMs }),
    embedded,
    table: (name: string) => `\`${database}\`.\`${name}\``,
    insertEverywhere: async (table, rows) => {
      if (!options.cluster) return runner.insert(`\`${database}\`.\`${table}\``, rows, 'system');
      if (!replicated) {
        for (const url of options.nodes ?? []) {
          const node = await openClickHouse({ url, user: options.user, password: options.password, database, cluster: null, dataDir: options.dataDir, paramBinding: options.paramBinding });
          try {
            await node.insert(node.table(table), rows, 'system');
          } finally {
            await node.close();
          }
        }
        return;
      }
      await insertOnEveryReplica(runner, { cluster: options.cluster, database, table, user: options.user, password: options.password }, rows);
    },
    close: async () => {
      await stats?.write(client);
      for (const each of distinct) await each.close();
    },
  };
}

/**
 * Runs the first statement of a server, retrying with back-off (250 ms doubling to 5 s) while the
 * server is not reachable (refused, reset, timed out: store-errors.ts) for up to `waitMs`, each try
 * logged: a server started together with Lookout (one compose file, one boot) may come up after it.
 * Any other error (a wrong password, a refused statement) fails at once.
 */
async function firstStatement(run: () => Promise<unknown>, waitMs: number, url: string, logger: Logger | undefined): Promise<void> {
  const started = Date.now();
  for (let wait = 250, attempt = 1; ; wait = Math.min(wait * 2, 5_000), attempt++) {
    try {
      await run();
      if (attempt > 1) logger?.info({ url, attempts: attempt, waitedMs: Date.now() - started }, 'ClickHouse server reachable; starting');
      return;
    } catch (error) {
      const unavailable = clickhouseUnavailable(error) instanceof StoreUnavailableError;
      if (!unavailable || Date.now() - started + wait > waitMs) {
        if (unavailable && waitMs > 0) logger?.error({ url, attempts: attempt, waitedMs: Date.now() - started }, 'ClickHouse server still not reachable; giving up (CLICKHOUSE_STARTUP_WAIT_MS)');
        throw error;
      }
      logger?.warn({ url, err: error, attempt, retryInMs: wait, waitedMs: Date.now() - started, waitMs }, 'ClickHouse server not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

type ChdbExtension = ReturnType<typeof createChdbConnection>['chdb'];

/** chdb's errors in the driver's shape (code and type), as the chdb connection reports them for every other call. */
const asDriverError = (error: unknown) => Object.assign(parseError(error instanceof Error ? error.message : String(error)), { cause: error });

/**
 * chdb's streaming query as a RawStream. Its streaming formats every chunk (a block) as an answer
 * of its own (checked with chdb 3.4): a `…WithNames` format repeats its header line at the start of
 * each chunk, which is dropped after the first, and Parquet would be a file per chunk, which no
 * reader takes as one — so Parquet is written whole by the engine to a file under `exportDir`
 * (INTO OUTFILE; the engine writes row group after row group) and then read from disk as the
 * client takes it, the file removed after. Its first byte comes only once the whole file is
 * written: an export asks for one slice of its window at a time (export-slices.ts), so that is a
 * slice's file, joined with the others by the caller (src/lifecycle/parquet-join.ts).
 */
async function* chdbChunks(chdb: ChdbExtension, query: string, format: StreamFormat, exportDir: string): AsyncGenerator<Uint8Array> {
  if (format === 'Parquet') {
    yield* chdbParquetFile(chdb, query, exportDir);
    return;
  }
  let stream: ReturnType<typeof chdb.queryStream>;
  try {
    stream = chdb.queryStream(query, { format });
  } catch (error) {
    throw asDriverError(error);
  }
  let header: Buffer | null = null;
  try {
    for await (const chunk of stream) {
      let bytes = Buffer.from(chunk.raw().buffer, chunk.raw().byteOffset, chunk.raw().byteLength);
      if (format === 'CSVWithNames') {
        if (header === null) header = Buffer.from(bytes.subarray(0, bytes.indexOf(0x0a) + 1));
        else if (header.length > 0 && bytes.subarray(0, header.length).equals(header)) bytes = bytes.subarray(header.length);
      }
      if (bytes.length > 0) yield bytes;
    }
  } catch (error) {
    throw asDriverError(error);
  }
}

async function* chdbParquetFile(chdb: ChdbExtension, query: string, exportDir: string): AsyncGenerator<Uint8Array> {
  const file = path.join(exportDir, `${randomUUID()}.parquet`);
  try {
    try {
      await chdb.queryAsync(`${query}\nINTO OUTFILE ${typedLiteral('String', file)} FORMAT Parquet`, { format: 'CSV' });
    } catch (error) {
      throw asDriverError(error);
    }
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) yield chunk;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** `db`.`name` (ClickHouseStore.table) as chdb's raw insert takes it: db.name, both plain identifiers. */
function unquotedTable(table: string): string {
  const match = /^`([A-Za-z0-9_]+)`\.`([A-Za-z0-9_]+)`$/.exec(table);
  if (!match) throw new Error(`not a table name of ClickHouseStore.table: ${table}`);
  return `${match[1]}.${match[2]}`;
}

/**
 * On a cluster every insert goes through a Distributed table: the wrapper adds the settings that
 * make it answer only once the rows are on their shard (and on a quorum of its replicas), whatever
 * module inserts. A call's own settings win.
 */
export function durableClusterInserts(client: ClickHouseClient, settings: Record<string, string | number>): ClickHouseClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      // An insert of pre-encoded JSON lines (insertLines) arrives as `exec` of an INSERT statement.
      if (property === 'insert' || property === 'exec') {
        return (params: SettingsParams & { query?: string }) =>
          property === 'exec' && !/^\s*INSERT\b/i.test(params.query ?? '') ? (value as (p: SettingsParams) => Promise<unknown>).call(target, params) :
          (value as (p: SettingsParams) => Promise<unknown>).call(target, { ...params, clickhouse_settings: { ...settings, ...params.clickhouse_settings } });
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

type SettingsParams = { clickhouse_settings?: Record<string, unknown> };

/**
 * chdb's connection runs every statement in one engine session, so `clickhouse_settings` given to
 * one call stay in force for all later calls (seen with chdb 3.4: join_use_nulls and
 * output_format_json_quote_64bit_integers leak, and a leaked readonly=2 turns every later insert into
 * a READONLY error). A server applies them per request. This wrapper restores per-call semantics:
 * every setting any call has used is sent with each later call, at its default unless the call sets
 * it. `readonly` cannot be reset once set, so it must go in the statement's own SETTINGS clause.
 * `always` are sent with every call, as a server client's default settings are.
 */
function isolateSessionSettings(client: ClickHouseClient, always: Record<string, string | number>): ClickHouseClient {
  const defaults = new Map<string, string>();
  const learn = async (names: string[]) => {
    const unknown = names.filter((name) => !defaults.has(name));
    if (unknown.length === 0) return;
    const result = await client.query({
      query: 'SELECT name, default FROM system.settings WHERE name IN {names:Array(String)}',
      query_params: { names: unknown },
      format: 'JSONEachRow',
      clickhouse_settings: Object.fromEntries(defaults),
    });
    for (const row of await result.json<{ name: string; default: string }>()) defaults.set(row.name, row.default);
  };
  const withDefaults = async <P extends SettingsParams>(params: P): Promise<P> => {
    const given = { ...always, ...params.clickhouse_settings };
    if ('readonly' in given) throw new Error('Put readonly in the statement\'s SETTINGS clause: on the embedded engine it cannot be undone');
    await learn(Object.keys(given));
    return { ...params, clickhouse_settings: { ...Object.fromEntries(defaults), ...given } };
  };
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'query' || property === 'command' || property === 'exec' || property === 'insert') {
        return async (params: SettingsParams) => (value as (p: SettingsParams) => Promise<unknown>).call(target, await withDefaults(params));
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
