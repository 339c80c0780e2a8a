/**
 * The embedded engine's CPU per statement kind of the ingest path, measured directly (issue 15):
 * the embedded engine keeps no system.query_log, and in the service its statements overlap, so
 * this replays what the service sends — the ingest writer's flushes (duplicate check, three event
 * inserts, the spans insert) and the settler's inserts (tool.called rewrites, trace.processed,
 * traces) — in one process against a fresh embedded engine, one statement at a time, and charges
 * each statement the CPU the engine's threads used while it ran (every thread but the event loop
 * and the background pools, read from /proc). Background work (merges) is reported apart,
 * including the wait for merges to finish after the run.
 *
 *   npx tsx bench/ingest/engine-replay.ts [--flushes 150] [--requests-per-flush 2] [--batch-size 1000] [--settle-every 6] [--registry 1]
 *   EXPERIMENT_DDL="ALTER TABLE lookout.spans ADD INDEX …" npx tsx bench/ingest/engine-replay.ts …   (try a schema change first)
 *
 * The rows are the service's own (prepareIngest, IngestWriter, settleSummaries); only the
 * concurrency differs (statements run one at a time, so per-statement CPU is attributable).
 * Absolute figures are CPU time, comparable across runs on a loaded machine. Each kind is also
 * charged the rows the engine read while it ran (system.events SelectedRows around each statement,
 * less what the probe itself reads). `--registry 1` gives the writer the stored-trace registry on an
 * embedded PostgreSQL (stored-traces.ts), as the service has it: the duplicate check then reads
 * ClickHouse only for traces seen before.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { prepareIngest } from '../../src/ingest/write/ingest-prepare.js';
import { IngestWriter, type PreparedWrite, type TraceNote } from '../../src/ingest/write/ingest-writer.js';
import { settleSummaries } from '../../src/ingest/settle/settle-summaries.js';
import { traceKeyString } from '../../src/spans/stored-spans.js';
import { openClickHouse, type ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { msToDateTime64 } from '../../src/platform/clickhouse/clickhouse-time.js';
import { raw } from '../../src/platform/clickhouse/sql/fragment.js';
import { statementKind } from '../../src/platform/clickhouse/sql/statement-stats.js';
import { migrateClickHouse } from '../../src/platform/migrations.js';
import { registerTraces, REGISTRY_COMPLETE_STATE } from '../../src/ingest/settle/stored-traces.js';
import { migratePostgres } from '../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../src/platform/postgres/postgres.js';
import { numberArg, root } from '../service-process.js';
import { descendantsCpu, threadCpu } from './cpu-split.js';
import { syntheticBatch } from './synthetic-batch.js';

const FLUSHES = numberArg('flushes', 150);
const PER_FLUSH = numberArg('requests-per-flush', 2);
const BATCH_SPANS = numberArg('batch-size', 1000);
/** A settle round every this many flushes (the settler's 1 s tick at ~12,000 spans/s and 2,000-span flushes). */
const SETTLE_EVERY = numberArg('settle-every', 6);
const REGISTRY = numberArg('registry', 0) === 1;

/** Threads whose CPU is background work, not the running statement's. */
const BACKGROUND = /^(MergeMutate|BgSchPool|BgStrmSchPool|BgDistSchPool|Move|Fetch|Common|PoolDelayExec|MemoryWorker|Collector)/;

/** This process's threads: the engine runs in it (cpu-split.ts reads them the same way for the service). */
const threads = () => threadCpu(process.pid);

interface Tally {
  statements: number;
  /** Rows the engine read during the kind's statements (SelectedRows). */
  rows: number;
  engineMs: number;
  mainMs: number;
  wallMs: number;
}

/**
 * The store with every statement run one at a time and charged to its kind: the CPU of the
 * non-background threads other than the event loop while it ran (`engine`), and of the event loop.
 */
function measuredStore(ch: ClickHouseStore) {
  const tally = new Map<string, Tally>();
  const selectedRows = async () => {
    const [row] = await ch.read<{ n: string | number }>(raw("SELECT value AS n FROM system.events WHERE event = 'SelectedRows'"), { lane: 'system' });
    return Number(row?.n ?? 0);
  };
  /** What one probe adds to the counter itself (measured once, subtracted from every statement). */
  let probeRows: number | null = null;
  const background = { ms: 0 };
  let chain: Promise<unknown> = Promise.resolve();
  let last = threads();
  const charge = (kind: string, before: ReturnType<typeof threads>, after: ReturnType<typeof threads>, wallMs: number, rows: number) => {
    const entry = tally.get(kind) ?? { statements: 0, rows: 0, engineMs: 0, mainMs: 0, wallMs: 0 };
    entry.statements++;
    entry.rows += rows;
    entry.wallMs += wallMs;
    for (const [tid, ns] of after.cpu) {
      const ms = (ns - (before.cpu.get(tid) ?? 0)) / 1e6;
      if (tid === process.pid) entry.mainMs += ms;
      else if (BACKGROUND.test(after.names.get(tid) ?? '')) background.ms += ms;
      else entry.engineMs += ms;
    }
    tally.set(kind, entry);
  };
  const serial = <T>(kind: string, work: () => Promise<T>): Promise<T> => {
    const run = chain.then(async () => {

      // CPU between statements (merges, our own JS) is not a statement's.
      const idle = threads();
      for (const [tid, ns] of idle.cpu) {
        if (tid !== process.pid && BACKGROUND.test(idle.names.get(tid) ?? '')) background.ms += (ns - (last.cpu.get(tid) ?? 0)) / 1e6;
      }
      if (probeRows === null) {
        const a = await selectedRows();
        probeRows = (await selectedRows()) - a;
      }
      const rowsBefore = await selectedRows();
      const idleAfterProbe = threads();
      const started = performance.now();
      const result = await work();
      const after = threads();
      const rows = Math.max(0, (await selectedRows()) - rowsBefore - probeRows);
      charge(kind, idleAfterProbe, after, performance.now() - started, rows);
      last = threads();
      return result;
    });
    chain = run.catch(() => {});
    return run;
  };
  const store: ClickHouseStore = {
    ...ch,
    read: (statement, options) => serial(statementKind(options.lane, statement), () => ch.read(statement, options)),
    readBytes: (statement, options) => serial(statementKind(options.lane, statement), () => ch.readBytes(statement, options)),
    insertBody: (table, parts, lane, columns) =>
      serial(`${lane} insert ${table.split('.').at(-1)?.replaceAll('`', '')}`, () => ch.insertBody(table, parts, lane, columns)),
    insertLines: (table, lines, lane) => serial(`${lane} insert ${table.split('.').at(-1)?.replaceAll('`', '')} (settle)`, () => ch.insertLines(table, lines, lane)),
  };
  return { store, tally, background };
}

async function main() {
  // chdb's pending statements do not keep Node's event loop alive; the service's HTTP server does.
  const keepAlive = setInterval(() => {}, 1000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-engine-replay-'));
  const ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir: dir });
  await migrateClickHouse(ch, path.join(root, 'clickhouse'));
  // EXPERIMENT_DDL: a statement run after the migrations (trying a table setting or index before it becomes one).
  if (process.env.EXPERIMENT_DDL) await ch.command(raw(process.env.EXPERIMENT_DDL), 'system');
  const origin = { actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: 'bench-key' };
  process.stdout.write(`preparing ${FLUSHES * PER_FLUSH} requests of ${BATCH_SPANS} spans...\n`);
  const writes: PreparedWrite[] = [];
  for (let i = 0; i < FLUSHES * PER_FLUSH; i++) {
    const body = syntheticBatch(BATCH_SPANS).protobuf;
    const prepared = prepareIngest({ body, encoding: 'protobuf', tenantId: 'bench-tenant', fixedProject: 'bench-project', origin });
    if (prepared.kind !== 'prepared') throw new Error('synthetic batch did not prepare');
    writes.push({ rows: prepared.rows, traces: prepared.traces, bytes: body.length * 3 });
  }
  const { store, tally, background } = measuredStore(ch);
  // The registry as a fresh installation has it: empty, and complete (nothing stored before it).
  let pg: PostgresStore | null = null;
  if (REGISTRY) {
    pg = await openPostgres({ databaseUrl: null, dataDir: dir });
    await migratePostgres(pg.sql, path.join(root, 'sql'));
    await pg.sql`insert into shared_state (name, value) values (${REGISTRY_COMPLETE_STATE}, ${pg.sql.json({ traces: 0 })})`;
  }
  const recorded: TraceNote[] = [];
  const registry = { statements: 0, wallMs: 0 };
  const writer = new IngestWriter({
    ch: store,
    logger: pino({ level: 'warn' }),
    maxInflightBytes: 2 ** 40,
    flushMs: 60_000,
    batchRows: PER_FLUSH * BATCH_SPANS,
    record: async (notes) => {
      recorded.push(...notes);
    },
    register: pg
      ? async (keys) => {
          const t = performance.now();
          const registration = await registerTraces(pg!.sql, keys);
          registry.statements++;
          registry.wallMs += performance.now() - t;
          return registration;
        }
      : undefined,
  });
  let version = Date.now();
  const settle = async (notes: TraceNote[]) => {
    // What the settler does with traces it holds in memory (trace-settler.ts settleRound), pricing aside.
    const byKey = new Map<string, TraceNote[]>();
    for (const n of notes) byKey.set(traceKeyString(n), [...(byKey.get(traceKeyString(n)) ?? []), n]);
    const settled = settleSummaries({
      processedAt: msToDateTime64(++version),
      traces: [...byKey].map(([key, ns]) => ({
        key,
        origin,
        rows: Buffer.concat(ns.flatMap((n) => n.spanLines ?? [])),
        writtenTools: ns.flatMap((n) => n.toolRows),
      })),
    });
    await store.insertLines(ch.table('event_tool_called'), settled.flatMap((s) => s.toolRewriteLines), 'ingest');
    await store.insertLines(ch.table('event_trace_processed'), settled.map((s) => s.processedLine), 'ingest');
    await store.insertLines(ch.table('traces'), settled.map((s) => s.traceLine), 'ingest');
  };
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const postgresStarted = descendantsCpu(process.pid);
  for (let f = 0; f < FLUSHES; f++) {

    // The group reaches batchRows with its last request: that starts the flush (flushMs is never reached).
    await Promise.all(writes.slice(f * PER_FLUSH, (f + 1) * PER_FLUSH).map((w) => writer.write(w)));
    if ((f + 1) % SETTLE_EVERY === 0 || f === FLUSHES - 1) await settle(recorded.splice(0));
  }
  await writer.stop();
  const runSeconds = (performance.now() - started) / 1000;
  const postgresMs = (descendantsCpu(process.pid) - postgresStarted) / 1e6;
  // Merges the run started, to the end (the engine does them sooner or later, on the same cores).
  const before = threads();
  for (let quiet = 0; quiet < 3; ) {
    await new Promise((r) => setTimeout(r, 500));
    const [row] = await ch.read<{ n: string | number }>(
      raw("SELECT count() AS n FROM system.merges WHERE database = 'lookout'"),
      { lane: 'system' },
    );
    quiet = Number(row.n) === 0 ? quiet + 1 : 0;
  }
  const after = threads();
  let mergeTail = 0;
  for (const [tid, ns] of after.cpu) if (tid !== process.pid) mergeTail += (ns - (before.cpu.get(tid) ?? 0)) / 1e6;
  const cpu = process.cpuUsage(cpuStarted);
  const spans = FLUSHES * PER_FLUSH * BATCH_SPANS;
  const perK = (ms: number) => ((ms * 1000) / spans).toFixed(1).padStart(6);
  const [parts] = await ch.read<{ parts: string | number; rows: string | number }>(
    raw("SELECT count() AS parts, sum(rows) AS rows FROM system.parts WHERE database = 'lookout' AND active"),
    { lane: 'system' },
  );
  const lines = [
    '',
    `${FLUSHES} flushes x ${PER_FLUSH} requests x ${BATCH_SPANS} spans (${spans} spans), a settle round every ${SETTLE_EVERY} flushes; ${runSeconds.toFixed(1)} s, load ${os.loadavg()[0].toFixed(1)}; stored-trace registry ${REGISTRY ? 'on' : 'off'}`,
    `engine CPU per 1000 spans by statement kind (statements per 1000 spans, engine ms, event-loop ms, wall ms, rows read):`,
  ];
  let engineTotal = 0;
  for (const [kind, t] of [...tally].sort((a, b) => b[1].engineMs - a[1].engineMs)) {
    engineTotal += t.engineMs;
    lines.push(`  ${kind.padEnd(44)} ${((t.statements * 1000) / spans).toFixed(2).padStart(6)} ${perK(t.engineMs)} ${perK(t.mainMs)} ${perK(t.wallMs)} ${String(Math.round((t.rows * 1000) / spans)).padStart(8)}`);
  }
  lines.push(
    `  ${'statements, all kinds'.padEnd(44)} ${''.padStart(6)} ${perK(engineTotal)}`,
    `  ${'background pools during the run (merges)'.padEnd(44)} ${''.padStart(6)} ${perK(background.ms)}`,
    `  ${'after the run, until merges finished'.padEnd(44)} ${''.padStart(6)} ${perK(mergeTail)}`,
    `engine total per 1000 spans: ${perK(engineTotal + background.ms + mergeTail).trim()} ms; process CPU during the run ${perK((cpu.user + cpu.system) / 1000).trim()} ms; active parts at the end ${parts.parts} (${parts.rows} rows)`,
  );
  if (pg) {
    lines.push(
      `stored-trace registry per 1000 spans: ${((registry.statements * 1000) / spans).toFixed(2)} upserts, ${perK(registry.wallMs).trim()} ms wall; PostgreSQL server CPU ${perK(postgresMs).trim()} ms`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await ch.close();
  await pg?.close();
  fs.rmSync(dir, { recursive: true, force: true });
  clearInterval(keepAlive);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
