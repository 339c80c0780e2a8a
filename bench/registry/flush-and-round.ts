/**
 * What the ingest path asks of PostgreSQL per flush and per settle round, on `--keys` traces
 * (default 1000, about what one flush of 8 × 1000-span requests carries at 10 spans a trace), on an
 * embedded PostgreSQL: for each step its wall time, the service process's CPU (the PostgreSQL client:
 * serializing parameters, parsing rows — everything this process does for the step), the server
 * backend's CPU, and the bytes on the connection each way. Medians over `--reps` repetitions, fresh
 * trace ids each time.
 *
 *   npx tsx bench/registry/flush-and-round.ts [--keys 1000] [--reps 30] [--projects 1]
 *
 * Steps, in the order the service runs them:
 * - flush, new traces: registerTraces (before the ClickHouse inserts), recordTraces (after them);
 * - flush, the same traces again: both once more (every row updated);
 * - settle round: claim the due traces with the first-settle mark, check they are still held, finish.
 *
 * Compare two versions of the code by running this file in a copy of each, alternated in the same
 * minutes (the figures are process CPU on a shared machine).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { claimDue, finishClaims, heldClaims, recordTraces, type QueueRecord } from '../../src/ingest/settle/settle-queue.js';
import { markFirstSettled, registerTraces, REGISTRY_COMPLETE_STATE, type RegisteredTrace } from '../../src/ingest/settle/stored-traces.js';
import { projectRoot } from '../../src/app/project-root.js';
import { migratePostgres } from '../../src/platform/migrations.js';
import { connectPostgres, openPostgres } from '../../src/platform/postgres/postgres.js';
import { PostgresStatementStats } from '../../src/platform/postgres/postgres-statement-stats.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const KEYS = arg('keys', 1000);
const REPS = arg('reps', 30);
const PROJECTS = arg('projects', 1);

// Bytes on the PostgreSQL connection, both ways (only sockets to the server's port are counted).
let pgPort = -1;
const bytes = { sent: 0, received: 0 };
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (this: net.Socket, chunk: unknown, ...rest: unknown[]) {
  if (this.remotePort === pgPort) bytes.sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Uint8Array).byteLength;
  return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
} as typeof write;
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (this: net.Socket, event: string | symbol, ...rest: unknown[]) {
  if (event === 'data' && this.remotePort === pgPort) bytes.received += (rest[0] as Uint8Array).byteLength;
  return (emit as (...a: unknown[]) => boolean).call(this, event, ...rest);
} as typeof emit;

/** utime + stime of a process in ms (clock ticks of 10 ms: summed over the repetitions). */
function processCpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-pg-round-'));
const pg = await openPostgres({ databaseUrl: null, dataDir: dir });
await migratePostgres(pg.sql, path.join(projectRoot, 'sql'));
await pg.sql`insert into shared_state (name, value) values (${REGISTRY_COMPLETE_STATE}, '{}')`;
pgPort = Number(new URL(pg.url).port);
// One connection: one backend whose CPU is the server's share of each step.
const stats = new PostgresStatementStats(path.join(dir, 'statements.json'));
const sql = connectPostgres(pg.url, { max: 1, stats });
const statements = () => stats.snapshot().statements;
const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;

type Sample = { statements: number; wall: number; cpu: number; server: number; sent: number; received: number };
const samples = new Map<string, Sample[]>();
async function measure<T>(step: string, run: () => Promise<T>): Promise<T> {
  const sent = bytes.sent;
  const sentStatements = statements();
  const received = bytes.received;
  const server = processCpuMs(pid);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await run();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const sample = { statements: statements() - sentStatements, wall, cpu: (used.user + used.system) / 1000, server: processCpuMs(pid) - server, sent: bytes.sent - sent, received: bytes.received - received };
  samples.set(step, [...(samples.get(step) ?? []), sample]);
  return result;
}

const origin = { actor: 'sdk', surface: 'otlp', user_id: randomUUID(), api_key_id: randomUUID() };
const tenantId = randomUUID();
const projects = Array.from({ length: PROJECTS }, () => randomUUID());
const timing = { settleMs: 0, maxWaitMs: 60_000 };

// Warm-up (statements prepared, caches filled), then the measured repetitions.
for (let rep = -3; rep < REPS; rep++) {
  const now = Date.now();
  const traces: RegisteredTrace[] = Array.from({ length: KEYS }, (_, i) => ({
    tenantId,
    projectId: projects[i % PROJECTS],
    traceId: randomUUID(),
    spanStartMs: [now - 1000, now],
  }));
  const records: QueueRecord[] = traces.map((t) => ({ tenantId: t.tenantId, projectId: t.projectId, traceId: t.traceId, hasRoot: true, origin }));
  const step = <T>(name: string, run: () => Promise<T>) => (rep < 0 ? run() : measure(name, run));
  await step('flush, new: registerTraces', () => registerTraces(sql, traces, null));
  await step('flush, new: recordTraces', () => recordTraces(sql, records, timing));
  await step('flush, again: registerTraces', () => registerTraces(sql, traces, null));
  await step('flush, again: recordTraces', () => recordTraces(sql, records, timing));
  const token = randomUUID();
  const round = await step('round: claimDue', () => claimDue(sql, { token, limit: KEYS, leaseMs: 60_000 }));
  if (round.claims.length !== KEYS) throw new Error(`claimed ${round.claims.length} of ${KEYS}`);
  const first = await step('round: markFirstSettled', () => markFirstSettled(sql, round.claims));
  if (first.size !== KEYS) throw new Error(`marked ${first.size} of ${KEYS}`);
  const held = await step('round: heldClaims', () => heldClaims(sql, token, round.claims));
  if (held.size !== KEYS) throw new Error(`held ${held.size} of ${KEYS}`);
  const finished = await step('round: finishClaims', () => finishClaims(sql, token, round.claims));
  if (finished.length !== KEYS) throw new Error(`finished ${finished.length} of ${KEYS}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(`keys ${KEYS}, projects ${PROJECTS}, reps ${REPS}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| step | statements | wall ms (median) | client CPU ms (median) | server CPU ms (mean) | bytes sent | bytes received |');
console.log('|-|-:|-:|-:|-:|-:|-:|');
const total = { statements: 0, wall: 0, cpu: 0, server: 0, sent: 0, received: 0 };
for (const [name, s] of samples) {
  const row = { statements: median(s.map((x) => x.statements)), wall: median(s.map((x) => x.wall)), cpu: median(s.map((x) => x.cpu)), server: mean(s.map((x) => x.server)), sent: median(s.map((x) => x.sent)), received: median(s.map((x) => x.received)) };
  for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += row[k];
  console.log(`| ${name} | ${row.statements} | ${row.wall.toFixed(2)} | ${row.cpu.toFixed(2)} | ${row.server.toFixed(1)} | ${row.sent} | ${row.received} |`);
}
console.log(`| all | ${total.statements} | ${total.wall.toFixed(2)} | ${total.cpu.toFixed(2)} | ${total.server.toFixed(1)} | ${total.sent} | ${total.received} |`);
await sql.end({ timeout: 5 });
await pg.close();
fs.rmSync(dir, { recursive: true, force: true });
