/**
 * The single place where Lookout's ClickHouse statements execute. Every
 * statement arrives as a fragment (fragment.ts) in a workload lane and leaves compiled with its
 * values bound for the backend (compile.ts) and its settings in its own SETTINGS clause:
 *
 *  - `analytics` — the query DSL, preset views, MCP, dashboard: must carry the tenant guard of its
 *    scope, passes its gate (analytics-gate.ts), runs read-only (readonly = 2) with
 *    max_execution_time = what is left of QUERY_TIMEOUT_SECONDS after waiting; a timeout is a 504.
 *  - `interactive` — cheap bounded reads a person waits on (trace detail, trace lists, lookups by
 *    id): the same rules as analytics, but its own gate and its own connections, so a trace read
 *    never queues behind heavy analytics of the same tenant.
 *  - `ingest` — the ingest writer and trace settling: never gated, so never behind analytics.
 *  - `system` — migrations, backfills, start-up recovery, the outbox relay.
 *
 * Reads of every lane run read-only. On a ClickHouse server each lane also carries the server's
 * own controls: `priority` (ingest before analytics) and, when configured, a `workload`; on the
 * embedded engine analytics reads run their threads at a lower OS priority (readSettings).
 *
 * On the embedded engine each lane has its own chdb connection, and each gated lane one per
 * slot: one chdb connection runs one statement at a time, while connections to the same data
 * directory run in parallel (and literal binding keeps them off chdb's process-wide chain for
 * parameterized statements). On a server one HTTP client serves every lane.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { QueryTimeoutError } from '../../http/errors.js';
import { clickhouseUnavailable } from '../../store-errors.js';
import type { AnalyticsGate } from './analytics-gate.js';
import { compile, type ParamBinding, type StatementSettings } from './compile.js';
import { isEngineError } from './engine-errors.js';
import type { Fragment } from './fragment.js';
import { concatParts, serverChunks, streamError, type PartsJoin, type RawStream, type StreamFormat, type StreamPart } from './statement-stream.js';
import { statementKind, type StatementStats } from './statement-stats.js';
import { countGuards, type TenantScope } from './tenant-guard.js';

export type Lane = 'analytics' | 'interactive' | 'ingest' | 'system';
/** The lanes a read waits for a slot in (a gate each); the others are never gated. */
export type GatedLane = 'analytics' | 'interactive';
/** Lanes that may write (commands, inserts). */
export type WriteLane = Exclude<Lane, GatedLane>;

export interface ReadOptions {
  lane: Lane;
  /** Required on a gated lane: the tenant whose guard the statement must carry, and whose share of the gate it uses. */
  scope?: TenantScope;
  /** The statement's time limit in seconds; defaults to QUERY_TIMEOUT_SECONDS on a gated lane, none elsewhere. */
  timeoutSeconds?: number;
  /** Further per-statement settings (e.g. output_format_json_quote_64bit_integers, join_use_nulls). */
  settings?: StatementSettings;
}

/** A streamed read (statement-stream.ts): always on a gated lane, under its tenant's guard. */
export interface StreamOptions {
  lane: GatedLane;
  scope: TenantScope;
  /** The statement's own time limit once it runs (exports: EXPORT_TIMEOUT_SECONDS); the wait for a slot is bounded by QUERY_TIMEOUT_SECONDS. */
  timeoutSeconds: number;
  settings?: StatementSettings;
  /** How the statements' answers join into one stream (statement-stream.ts); absent: one after another. */
  join?: PartsJoin;
}

export interface LaneControls {
  /** ClickHouse server `workload` names per lane (server-side CREATE WORKLOAD); absent: none. */
  workloads?: Partial<Record<Lane, string>>;
  /** The embedded engine's nice value (0–19) for analytics statements' threads (ANALYTICS_NICE); 0 or absent: none. */
  analyticsNice?: number;
}

/**
 * The drivers per lane (on a server, the same client repeated). A gated lane holds one per slot;
 * `ingest` more than one, so an insert does not wait behind a settling read of a big trace.
 */
export type LaneClients = {
  ingest: ClickHouseClient[];
  system: ClickHouseClient[];
  analytics: ClickHouseClient[];
  interactive: ClickHouseClient[];
};

/**
 * An insert of a body straight into the engine, for a client on the embedded engine: chdb's raw
 * insert takes the bytes without a copy and parses them on its own threads, where the driver's
 * insert would first turn them into one string (twice: body, then statement + body). `columns`
 * given: JSONCompactEachRow lines of those columns' values; absent: JSONEachRow objects.
 */
export type RawInsert = (table: string, body: Uint8Array, columns?: readonly string[], settings?: InsertSettings) => Promise<void>;

/** Settings of one insert statement (its SETTINGS clause), over those every statement carries. */
export type InsertSettings = Readonly<Record<string, string | number>>;

/** A body's format: arrays of the named columns' values, or objects naming their fields (insertBody). */
export const bodyFormat = (columns?: readonly string[]) => (columns ? 'JSONCompactEachRow' : 'JSONEachRow');

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** ` (a, b)` of an insert's column list; names come from code (encoded-rows.ts), checked anyway since they go into the SQL. */
function columnList(columns?: readonly string[]): string {
  if (!columns) return '';
  const bad = columns.find((c) => !IDENTIFIER.test(c));
  if (columns.length === 0 || bad !== undefined) throw new Error(`not a column list: ${columns.join(', ')}`);
  return ` (${columns.join(', ')})`;
}

export interface RunnerOptions {
  clients: LaneClients;
  /** Raw inserts of the clients that have them (the embedded engine's). */
  rawInserts?: Map<ClickHouseClient, RawInsert>;
  /** Streaming queries of the clients that have them (the embedded engine's; statement-stream.ts). */
  rawStreams?: Map<ClickHouseClient, RawStream>;
  binding: ParamBinding;
  /** True on a ClickHouse server: lane priority and workload settings apply. */
  server: boolean;
  gates: Record<GatedLane, AnalyticsGate>;
  queryTimeoutSeconds: number;
  controls?: LaneControls;
  /** Per statement kind tally for the ingest benchmark; absent: nothing counted. */
  stats?: StatementStats | null;
  /** A server's readiness-probe client (short request timeout); absent: the system lane's. */
  probe?: ClickHouseClient;
}

/** A generator's items as an async iterable, each taken only when asked for. */
async function* toAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  yield* items;
}

/** ClickHouse's default max_query_size (bytes of SQL the parser accepts). */
const DEFAULT_MAX_QUERY_SIZE = 262_144;

/**
 * A statement longer than the parser's default limit (inlined values, compile.ts: e.g. the ingest
 * writer's span ids of a 20,000-span batch) raises the limit for its own request: the limit
 * applies before parsing, so the statement's SETTINGS clause cannot carry it.
 */
function querySize(text: string): { clickhouse_settings?: Record<string, number> } {
  const bytes = Buffer.byteLength(text);
  return bytes < DEFAULT_MAX_QUERY_SIZE - 1024 ? {} : { clickhouse_settings: { max_query_size: 2 * bytes } };
}

/** Two requests' settings in one (a command carries its lane's controls and perhaps a raised max_query_size). */
function withSettings(...parts: { clickhouse_settings?: Record<string, number | string> }[]): { clickhouse_settings?: Record<string, number | string> } {
  const merged = Object.fromEntries(parts.flatMap((p) => Object.entries(p.clickhouse_settings ?? {})));
  return Object.keys(merged).length > 0 ? { clickhouse_settings: merged } : {};
}

/** Server `priority`: lower runs first; 0 would mean "no priority". Ingest, then system and interactive reads, then analytics. */
const LANE_PRIORITY: Record<Lane, number> = { ingest: 1, system: 2, interactive: 2, analytics: 3 };

const isGated = (lane: Lane): lane is GatedLane => lane === 'analytics' || lane === 'interactive';

/**
 * Who hears of every statement (the service's metrics): its lane, its seconds (a gated read's wait
 * included) and its error, if any; and a gated read refused before it ran.
 */
export interface StatementObserver {
  statement(lane: Lane, seconds: number, error: unknown): void;
  gateRefused(lane: GatedLane, reason: 'queue_full' | 'timeout'): void;
}

export class StatementRunner {
  /** Set by the service (ClickHouseStore.observe); null: nobody listens. */
  observer: StatementObserver | null = null;

  /** Clients of each gated lane not running a statement now; its gate admits at most as many statements as there are clients. */
  private readonly idle: Record<GatedLane, ClickHouseClient[]>;
  /** Statements in flight per client of the ungated lanes. */
  private readonly busy = new Map<ClickHouseClient, number>();

  constructor(private readonly options: RunnerOptions) {
    if (Object.values(options.clients).some((list) => list.length === 0)) throw new Error('every lane needs a client');
    this.idle = { analytics: [...options.clients.analytics], interactive: [...options.clients.interactive] };
  }

  /** Runs `work` on the least busy client of an ungated lane. */
  private async onLane<T>(lane: WriteLane, work: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    const client = this.options.clients[lane].reduce((best, c) => ((this.busy.get(c) ?? 0) < (this.busy.get(best) ?? 0) ? c : best));
    this.busy.set(client, (this.busy.get(client) ?? 0) + 1);
    try {
      return await work(client);
    } catch (error) {
      throw clickhouseUnavailable(error);
    } finally {
      this.busy.set(client, (this.busy.get(client) ?? 1) - 1);
    }
  }

  get binding(): ParamBinding {
    return this.options.binding;
  }

  /** Runs a SELECT and returns its rows (JSONEachRow). */
  async read<Row = Record<string, unknown>>(statement: Fragment, options: ReadOptions): Promise<Row[]> {
    return this.observed(options.lane, () => this.run(statement, options, (client, settings) => this.select<Row>(client, statement, settings)));
  }

  /** `work` timed and its failure told to the observer; a bare call when nobody listens. */
  private async observed<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
    const observer = this.observer;
    if (!observer) return work();
    const started = performance.now();
    try {
      const result = await work();
      observer.statement(lane, (performance.now() - started) / 1000, null);
      return result;
    } catch (error) {
      observer.statement(lane, (performance.now() - started) / 1000, error);
      throw error;
    }
  }

  /** `work` counted under its statement kind when the benchmark asks for it. */
  private measured<T>(lane: Lane, statement: Fragment | string, work: () => Promise<T>, bytesOf?: (result: T) => number): Promise<T> {
    const stats = this.options.stats;
    return stats ? stats.measure(statementKind(lane, statement), work, bytesOf) : work();
  }

  /**
   * Runs a SELECT and returns its JSONEachRow answer as raw bytes, never decoded or parsed here:
   * the caller hands them to the compute pool (a deep trace is tens of megabytes of rows; parsing
   * them on the event loop stalled it). Same lanes, gate and guard check as `read`.
   */
  async readBytes(statement: Fragment, options: ReadOptions): Promise<Buffer> {
    return this.observed(options.lane, () => this.run(statement, options, (client, settings) => this.selectBytes(client, statement, settings)));
  }

  /** A read's lane: ungated lanes on their least busy client, a gated lane through its gate with its time limit. */
  private async run<T>(statement: Fragment, options: ReadOptions, select: (client: ClickHouseClient, settings: StatementSettings) => Promise<T>): Promise<T> {
    if (this.options.stats) {
      const measuredSelect = select;
      select = (client, settings) => this.measured(options.lane, statement, () => measuredSelect(client, settings), (r) => (Buffer.isBuffer(r) ? r.length : 0));
    }
    if (options.scope) this.checkGuards(statement, options.scope);
    const lane = options.lane;
    if (!isGated(lane)) {
      const timeout = options.timeoutSeconds;
      const limit: StatementSettings = timeout !== undefined ? { max_execution_time: Math.max(1, Math.ceil(timeout)) } : {};
      const settings = { ...options.settings, ...limit, readonly: 2, ...this.readSettings(lane) };
      return this.onLane(lane, (client) => select(client, settings));
    }
    if (!options.scope) throw new Error(`a read on the ${lane} lane needs the scope of its tenant`);
    const timeoutSeconds = options.timeoutSeconds ?? this.options.queryTimeoutSeconds;
    const deadline = Date.now() + timeoutSeconds * 1000;
    let release: () => void;
    try {
      release = await this.options.gates[lane].acquire(options.scope.tenantId, deadline, timeoutSeconds);
    } catch (error) {
      this.observer?.gateRefused(lane, error instanceof QueryTimeoutError ? 'timeout' : 'queue_full');
      throw error;
    }
    const client = this.idle[lane].pop() ?? this.options.clients[lane][0];
    try {
      // What the wait left of the limit, to the millisecond (ClickHouse takes fractional seconds).
      const left = Math.max(0.001, Math.round(deadline - Date.now()) / 1000);
      return await select(client, { ...options.settings, max_execution_time: left, readonly: 2, ...this.readSettings(lane) });
    } catch (error) {
      if (isEngineError(error, 'TIMEOUT_EXCEEDED')) throw new QueryTimeoutError(timeoutSeconds);
      throw clickhouseUnavailable(error);
    } finally {
      this.idle[lane].push(client);
      release();
    }
  }

  /** One statement streamed (streamParts with one part). */
  async stream(statement: Fragment, format: StreamFormat, options: StreamOptions): Promise<Readable> {
    return this.streamParts([{ statement, format }], options);
  }

  /**
   * Runs SELECTs on a gated lane one after another and hands their answers over as one byte stream,
   * each part in its own format, read as the caller reads it (statement-stream.ts): an export read
   * in slices, so that no single statement holds more than a slice in the engine. The parts share
   * one slot and connection and one time limit (`timeoutSeconds` from the first statement; each next
   * one gets what is left), and the next statement starts only once the reader took the previous
   * one's last chunk (with a `join`, once the join asks for it). The first chunk is fetched before this resolves, so a statement that fails at
   * once (time limit, a store down) rejects here, before the caller wrote anything; a later failure
   * destroys the stream. The slot and connection are held until the stream ends or is destroyed:
   * the caller must consume or destroy it.
   */
  async streamParts(parts: readonly StreamPart[], options: StreamOptions): Promise<Readable> {
    const { lane, scope, timeoutSeconds } = options;
    if (parts.length === 0) throw new Error('a streamed read needs a statement');
    for (const part of parts) this.checkGuards(part.statement, scope);
    // Waiting for a slot is bounded like any analytics read, so a refusal still answers before the request deadline.
    const waitSeconds = this.options.queryTimeoutSeconds;
    let release: () => void;
    try {
      release = await this.options.gates[lane].acquire(scope.tenantId, Date.now() + waitSeconds * 1000, waitSeconds);
    } catch (error) {
      this.observer?.gateRefused(lane, error instanceof QueryTimeoutError ? 'timeout' : 'queue_full');
      throw error;
    }
    const client = this.idle[lane].pop() ?? this.options.clients[lane][0];
    const started = performance.now();
    let open = true;
    const close = (error: unknown) => {
      if (!open) return;
      open = false;
      this.idle[lane].push(client);
      release();
      this.observer?.statement(lane, (performance.now() - started) / 1000, error);
    };
    const deadline = Date.now() + timeoutSeconds * 1000;
    const raw = this.options.rawStreams?.get(client);
    const partChunks = (part: StreamPart): AsyncIterable<Uint8Array> => {
      // What the earlier parts left of the limit, to the millisecond (ClickHouse takes fractional seconds).
      const left = Math.round(deadline - Date.now()) / 1000;
      if (left <= 0) throw new QueryTimeoutError(timeoutSeconds);
      const settings = { ...options.settings, max_execution_time: left, readonly: 2, ...this.readSettings(lane) };
      // The embedded engine's streaming query takes no separate values: they go in as typed literals (compile.ts).
      if (raw) return raw(compile(part.statement, 'literal', settings).sql, part.format);
      const compiled = compile(part.statement, this.options.binding, settings);
      return serverChunks(client, compiled, part.format, querySize(compiled.sql));
    };
    function* eachPart(): Generator<AsyncIterable<Uint8Array>> {
      for (const part of parts) yield partChunks(part);
    }
    const join = options.join ?? concatParts;
    async function* allParts(): AsyncGenerator<Uint8Array> {
      // yield* hands an early return on to the join and so to the running part, which cancels its statement.
      yield* join(toAsync(eachPart()));
    }
    const chunks = allParts();
    let first: IteratorResult<Uint8Array>;
    try {
      first = await chunks.next();
    } catch (error) {
      const mapped = streamError(error, timeoutSeconds);
      close(mapped);
      throw mapped;
    }
    async function* rest(): AsyncGenerator<Uint8Array> {
      let failure: unknown = null;
      try {
        for (let next = first; !next.done; next = await chunks.next()) yield next.value;
      } catch (error) {
        failure = streamError(error, timeoutSeconds);
        throw failure;
      } finally {
        // Ended early (the reader went away): cancels the engine's query before its connection is reused.
        await chunks.return(undefined);
        close(failure);
      }
    }
    const body = Readable.from(rest(), { objectMode: false });
    // A stream destroyed before it was first read never runs rest()'s finally: end the query here too.
    body.once('close', () => {
      void Promise.resolve(chunks.return(undefined))
        .catch(() => undefined)
        .finally(() => close(null));
    });
    return body;
  }

  /**
   * Runs a statement without a result: DDL, INSERT … SELECT, ALTER. No SETTINGS clause is added
   * (on CREATE TABLE it would mean table settings); a server gets the lane's controls per request.
   */
  async command(statement: Fragment, lane: WriteLane): Promise<void> {
    const compiled = compile(statement, this.options.binding);
    await this.observed(lane, () =>
      this.onLane(lane, (client) =>
        this.measured(lane, statement, () => client.command({ query: compiled.sql, ...this.queryParams(compiled.params), ...withSettings(this.requestSettings(lane), querySize(compiled.sql)) })),
      ),
    );
  }

  /** Inserts rows as JSONEachRow. `table` is a qualified name from ClickHouseStore.table. */
  async insert(table: string, rows: readonly object[], lane: WriteLane): Promise<void> {
    if (rows.length === 0) return;
    await this.observed(lane, () =>
      this.onLane(lane, (client) =>
        this.measured(lane, `INSERT INTO ${table}`, () => client.insert({ table, values: rows, format: 'JSONEachRow', ...this.requestSettings(lane) })),
      ),
    );
  }

  /**
   * Inserts rows already serialized as JSONEachRow lines (on the compute pool) as one
   * body: the driver's own insert would JSON.stringify every row on the event loop in one go.
   */
  async insertLines(table: string, lines: readonly string[], lane: WriteLane): Promise<void> {
    if (lines.length === 0) return;
    await this.insertBody(table, [Buffer.from(`${lines.join('\n')}\n`)], lane);
  }

  /**
   * Inserts a body given as byte parts, each holding whole lines (encoded on the compute pool:
   * ingest-writer.ts), as one statement: with `columns`, JSONCompactEachRow lines of those columns'
   * values in that order (the others take their defaults); without, JSONEachRow objects. On the
   * embedded engine the bytes go to the engine as they are (RawInsert); on a server they stream as
   * the request body. `settings` apply to this statement alone.
   */
  async insertBody(table: string, parts: readonly Uint8Array[], lane: WriteLane, columns?: readonly string[], settings?: InsertSettings): Promise<void> {
    let bytes = 0;
    for (const part of parts) bytes += part.byteLength;
    if (bytes === 0) return;
    await this.observed(lane, () =>
      this.onLane(lane, (client) => this.measured(lane, `INSERT INTO ${table}`, () => this.sendBody(client, table, parts, bytes, lane, columns, settings), () => bytes)),
    );
  }

  private async sendBody(
    client: ClickHouseClient, table: string, parts: readonly Uint8Array[], bytes: number, lane: WriteLane, columns?: readonly string[], settings?: InsertSettings,
  ): Promise<void> {
    const raw = this.options.rawInserts?.get(client);
    if (raw) {
      // chdb builds its own statement from the column names (and checks them) and the settings.
      await raw(table, parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes), columns, settings);
      return;
    }
    const result = await client.exec({
      query: `INSERT INTO ${table}${columnList(columns)} FORMAT ${bodyFormat(columns)}`,
      values: Readable.from(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)), { objectMode: false }),
      ...withSettings(this.requestSettings(lane), { clickhouse_settings: { ...settings } }),
    });
    // Nothing to read, but the answer must be consumed to release the connection.
    result.stream.resume();
    await new Promise<void>((resolve, reject) => {
      result.stream.once('end', resolve).once('close', resolve).once('error', reject);
    });
  }

  /** A lane's controls as request settings: per request on a server; none on the embedded engine, where they would stick to its session. */
  private requestSettings(lane: Lane): { clickhouse_settings?: Record<string, number | string> } {
    const settings = this.laneSettings(lane);
    return Object.keys(settings).length > 0 ? { clickhouse_settings: settings } : {};
  }

  /**
   * Whether the server answers within `timeoutMs` (the readiness probe): on a server through a client
   * of its own with that request timeout, so a probe never waits behind a lane's statements; on the
   * embedded engine, the system connection, raced against the same bound.
   */
  async ping(timeoutMs = 2000): Promise<boolean> {
    const client = this.options.probe ?? this.options.clients.system[0];
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([client.ping().then((r) => r.success, () => false), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async select<Row>(client: ClickHouseClient, statement: Fragment, settings: StatementSettings): Promise<Row[]> {
    const compiled = compile(statement, this.options.binding, settings);
    const result = await client.query({ query: compiled.sql, ...this.queryParams(compiled.params), ...querySize(compiled.sql), format: 'JSONEachRow' });
    return result.json<Row>();
  }

  private async selectBytes(client: ClickHouseClient, statement: Fragment, settings: StatementSettings): Promise<Buffer> {
    const compiled = compile(statement, this.options.binding, settings);
    const result = await client.exec({ query: `${compiled.sql}\nFORMAT JSONEachRow`, ...this.queryParams(compiled.params), ...querySize(compiled.sql) });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of result.stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
  }

  /** No `query_params` at all when there are none: chdb sends any statement with them through its one chain. */
  private queryParams(params: Record<string, unknown>): { query_params?: Record<string, unknown> } {
    return Object.keys(params).length > 0 ? { query_params: params } : {};
  }

  /**
   * What a read carries for its lane: on a server the lane's controls; on the embedded engine,
   * whose statements share the service's cores, analytics reads run their threads at a lower OS
   * priority (`os_thread_priority`, the nice value LaneControls.analyticsNice), so the threads of a
   * trace read, an insert or a settle round are scheduled ahead of a heavy query's without a slot
   * held back from it; alone, a query still has every core. The engine changes a thread's nice
   * only where the process may (root, or CAP_SYS_NICE), and sets it back when the query ends.
   */
  private readSettings(lane: Lane): Record<string, number | string> {
    if (this.options.server) return this.laneSettings(lane);
    const nice = this.options.controls?.analyticsNice ?? 0;
    return lane === 'analytics' && nice > 0 ? { os_thread_priority: nice } : {};
  }

  private laneSettings(lane: Lane): Record<string, number | string> {
    if (!this.options.server) return {};
    const workload = this.options.controls?.workloads?.[lane];
    return { priority: LANE_PRIORITY[lane], ...(workload ? { workload } : {}) };
  }

  /** A scoped read carries at least one guard of its tenant, one per guarded table, and none of another tenant. */
  private checkGuards(statement: Fragment, scope: TenantScope): void {
    const { guards, foreignGuards, tables } = countGuards(statement, scope.tenantId);
    if (guards === 0 || guards < tables || foreignGuards > 0) {
      throw new Error(`refusing a read of ${tables} table(s) with ${guards} guard(s) of its tenant and ${foreignGuards} of another`);
    }
  }
}
