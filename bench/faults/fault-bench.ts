/**
 * Store faults during steady ingest, with the tight figures the fault tests leave out
 * (test/integration/faults/ assert behaviour with bounds generous enough for a loaded CI runner).
 *
 * Scenarios (`--scenarios`, default all four, in this order):
 *   clickhouse-frozen   the ClickHouse server (its own process) stopped with SIGSTOP for `--fault-seconds`, then SIGCONT
 *   clickhouse-killed   the server killed with SIGKILL, started again on its data after `--fault-seconds`
 *   postgres-frozen     the embedded PostgreSQL (postmaster and every backend) SIGSTOPped for `--fault-seconds`, then SIGCONT
 *   postgres-killed     the embedded postmaster killed with SIGKILL; Lookout restarts it by itself (no fault length)
 *
 * Lookout runs as its own process (bench/service-process.ts) with its default fault bounds; the
 * ClickHouse scenarios point it at a real server (test/helpers/clickhouse-server/), the PostgreSQL
 * ones run both stores embedded. Each scenario has a project and a steady sender of its own
 * (`--senders` loops posting one 4-span agent run at a time, re-sending after 429/503 as an
 * exporter does, giving up after the exporter's 10 s timeout: test/helpers/steady-sender.ts), runs
 * `--warmup-seconds` before the fault and `--after-seconds` after recovery. Per scenario it prints:
 *   first 503        fault start → the first ingest answer 503 arrives
 *   p50/p99/max      latency of the ingest answers to requests in flight during the fault (200 and 503 alike)
 *   hung             requests the exporter's 10 s timeout cut (no answer)
 *   readyz 503       fault start → the first /readyz 503 (polled every 250 ms)
 *   readyz 200       store back → the first /readyz 200
 *   ingest 200       store back → the first ingest answer 200
 * For postgres-killed, which Lookout undoes itself, "store back" is the kill, and the 200s counted
 * are the first after the fault was noticed (the first 503); "during the fault" ends at that 200.
 *   lost / doubled   acknowledged runs with no span stored / traces not stored exactly once, per span
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openClickHouse, type ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { acknowledgedCount } from '../../test/helpers/acknowledged-count.js';
import { startClickHouseServer, type ClickHouseServer } from '../../test/helpers/clickhouse-server/clickhouse-server.js';
import { sleep, until } from '../../test/helpers/fault-probes.js';
import { postgresProcesses, postmasterPid, signalAll } from '../../test/helpers/postgres-process.js';
import { SteadySender, type Answer } from '../../test/helpers/steady-sender.js';
import { BENCH_KEY, numberArg, startServiceProcess, type ServiceProcess } from '../service-process.js';

type Scenario = 'clickhouse-frozen' | 'clickhouse-killed' | 'postgres-frozen' | 'postgres-killed';
const ALL: Scenario[] = ['clickhouse-frozen', 'clickhouse-killed', 'postgres-frozen', 'postgres-killed'];

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : null);
const scenarios = (arg('scenarios')?.split(',') ?? ALL) as Scenario[];
for (const s of scenarios) if (!ALL.includes(s)) throw new Error(`--scenarios: unknown ${s} (${ALL.join(', ')})`);
const faultMs = numberArg('fault-seconds', 20) * 1000;
const warmupMs = numberArg('warmup-seconds', 5) * 1000;
const afterMs = numberArg('after-seconds', 5) * 1000;
const senders = numberArg('senders', 8);

interface Row {
  scenario: Scenario;
  acknowledged: number;
  first503Ms: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  answersDuringFault: number;
  refusedDuringFault: number;
  hung: number;
  readyz503Ms: number | null;
  readyz200Ms: number | null;
  ingest200Ms: number | null;
  lost: number;
  doubled: number;
  unacknowledged: number;
}

/** The faults of one store: what stopping and restoring it means. */
interface Fault {
  begin(): Promise<void>;
  /** Ends the fault; resolves once the store is back (for a store Lookout restarts itself, at once). */
  end(): Promise<void>;
  /** Whether the fault lasts `--fault-seconds` (false: the store comes back by itself). */
  timed: boolean;
}

function faultOf(scenario: Scenario, svc: ServiceProcess, server: ClickHouseServer | null): Fault {
  switch (scenario) {
    case 'clickhouse-frozen':
      return { begin: async () => server!.freeze(), end: async () => server!.thaw(), timed: true };
    case 'clickhouse-killed':
      return { begin: () => server!.kill(), end: () => server!.start(), timed: true };
    case 'postgres-frozen': {
      let frozen: number[] = [];
      return {
        begin: async () => {
          frozen = postgresProcesses(svc.dataDir);
          signalAll(frozen, 'SIGSTOP');
        },
        end: async () => signalAll(frozen, 'SIGCONT'),
        timed: true,
      };
    }
    case 'postgres-killed':
      return {
        begin: async () => {
          process.kill(postmasterPid(svc.dataDir), 'SIGKILL');
        },
        end: async () => {},
        timed: false,
      };
  }
}

async function newProject(svc: ServiceProcess, name: string): Promise<string> {
  const res = await fetch(`${svc.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`project create: ${res.status}`);
  return ((await res.json()) as { id: string }).id;
}

/** Polls /readyz every 250 ms; the first time (epoch ms) it answered `status`, from `since` on. */
class ReadyzWatch {
  private readonly seen: { status: number; at: number }[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly url: string) {
    this.loop = (async () => {
      while (this.running) {
        const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.status, () => 0);
        this.seen.push({ status, at: Date.now() });
        await sleep(250);
      }
    })();
  }

  firstAfter(since: number, status: number): number | null {
    return this.seen.find((s) => s.at >= since && s.status === status)?.at ?? null;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

const answeredAt = (a: Answer) => a.at + a.ms;
const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);

/** One scenario on a running service: its own project and sender; the figures and the acknowledged runs. */
async function runScenario(scenario: Scenario, svc: ServiceProcess, server: ClickHouseServer | null): Promise<{ row: Omit<Row, 'lost' | 'doubled' | 'unacknowledged'>; project: string; sender: SteadySender }> {
  const project = await newProject(svc, scenario);
  const sender = new SteadySender(svc.url, BENCH_KEY, project, { senders });
  const readyz = new ReadyzWatch(svc.url);
  const fault = faultOf(scenario, svc, server);
  sender.start();
  await sleep(warmupMs);
  const began = Date.now();
  await fault.begin();
  if (fault.timed) await sleep(faultMs);
  await fault.end();
  const first503 = (): number | null => sender.answers.filter((a) => a.status === 503 && answeredAt(a) >= began).map(answeredAt).sort((a, b) => a - b)[0] ?? null;
  if (!fault.timed) {
    // The store comes back by itself: recovery is counted from the kill, once the fault was noticed.
    await until('the fault noticed', async () => readyz.firstAfter(began, 503) !== null && first503() !== null, 60_000).catch(() => 0);
  }
  const back = fault.timed ? Date.now() : began;
  // Recovered: a 200 after the store is back and, for a store that comes back by itself, after its first refusal.
  const readyFrom = () => (fault.timed ? back : (readyz.firstAfter(began, 503) ?? back));
  const ingestFrom = () => (fault.timed ? back : (first503() ?? back));
  const first200 = (): number | null => sender.answers.filter((a) => a.status === 200 && answeredAt(a) >= ingestFrom()).map(answeredAt).sort((a, b) => a - b)[0] ?? null;
  await until('/readyz 200 after the fault', async () => readyz.firstAfter(readyFrom(), 200) !== null, 180_000);
  await until('ingest 200 after the fault', async () => first200() !== null, 180_000);
  await sleep(afterMs);
  await sender.stop();
  await readyz.stop();
  // Requests in flight at any moment while the store was away (for a store that comes back by
  // itself: until ingest answered 200 again), those already sent when it failed included.
  const faultEnd = fault.timed ? back : first200()!;
  const during = sender.answers.filter((a) => a.at < faultEnd && answeredAt(a) >= began);
  const latencies = during.map((a) => a.ms).sort((a, b) => a - b);
  const refused = first503();
  const ready503 = readyz.firstAfter(began, 503);
  const ready200 = readyz.firstAfter(readyFrom(), 200);
  const accepted = first200();
  return {
    project,
    sender,
    row: {
      scenario,
      acknowledged: sender.acknowledged.size,
      first503Ms: refused !== null ? refused - began : null,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.length ? latencies[latencies.length - 1] : null,
      answersDuringFault: during.length,
      refusedDuringFault: during.filter((a) => a.status === 503).length,
      hung: sender.hung,
      readyz503Ms: ready503 !== null ? ready503 - began : null,
      readyz200Ms: ready200 !== null ? ready200 - back : null,
      ingest200Ms: accepted !== null ? accepted - back : null,
    },
  };
}

/** Runs `group` on one service, counts what each scenario's project holds (`open` gives the ClickHouse to read, after `svc` stopped). */
async function runGroup(group: Scenario[], svc: ServiceProcess, server: ClickHouseServer | null, open: () => Promise<ClickHouseStore>): Promise<Row[]> {
  const runs = [];
  for (const scenario of group) {
    process.stderr.write(`${scenario}…\n`);
    runs.push(await runScenario(scenario, svc, server));
  }
  await svc.stop({ keepDataDir: true });
  const ch = await open();
  try {
    const rows: Row[] = [];
    for (const run of runs) {
      const count = await acknowledgedCount(ch, run.project, run.sender.acknowledged);
      rows.push({ ...run.row, lost: count.lost.length, doubled: count.doubled.length, unacknowledged: count.unacknowledged.length });
    }
    return rows;
  } finally {
    await ch.close();
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

const quiet = { LOG_LEVEL: 'silent' };
const rows: Row[] = [];
const clickhouseGroup = scenarios.filter((s) => s.startsWith('clickhouse'));
const postgresGroup = scenarios.filter((s) => s.startsWith('postgres'));

if (clickhouseGroup.length > 0) {
  const server = await startClickHouseServer();
  try {
    const svc = await startServiceProcess('faults-clickhouse', {
      ...quiet,
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_USER: server.user,
      CLICKHOUSE_PASSWORD: server.password,
    });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-faults-'));
    rows.push(...(await runGroup(clickhouseGroup, svc, server, () =>
      openClickHouse({ url: server.url, user: server.user, password: server.password, database: 'lookout', cluster: null, dataDir: scratch }))));
    fs.rmSync(scratch, { recursive: true, force: true });
  } finally {
    server.thaw();
    await server.stop();
    fs.rmSync(path.dirname(server.dataDir), { recursive: true, force: true });
  }
}
if (postgresGroup.length > 0) {
  const svc = await startServiceProcess('faults-postgres', quiet);
  try {
    rows.push(...(await runGroup(postgresGroup, svc, null, () =>
      openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir: svc.dataDir }))));
  } finally {
    try {
      signalAll(postgresProcesses(svc.dataDir), 'SIGCONT');
    } catch {
      // stopped already
    }
  }
}

const ms = (v: number | null) => (v === null ? '–' : `${v}`);
console.log(`\nStore faults during steady ingest: ${senders} senders, faults of ${faultMs / 1000} s (postgres-killed: until Lookout restarted it). Times in ms.\n`);
console.log('| scenario | acknowledged | first 503 | p50 | p99 | max | answers (503) during | hung | /readyz 503 | /readyz 200 after | ingest 200 after | lost | doubled |');
console.log('|-|-|-|-|-|-|-|-|-|-|-|-|-|');
for (const r of rows) {
  console.log(
    `| ${r.scenario} | ${r.acknowledged} | ${ms(r.first503Ms)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${ms(r.maxMs)} | ${r.answersDuringFault} (${r.refusedDuringFault}) | ${r.hung} | ${ms(r.readyz503Ms)} | ${ms(r.readyz200Ms)} | ${ms(r.ingest200Ms)} | ${r.lost} | ${r.doubled} |`,
  );
}
const unacknowledged = rows.reduce((n, r) => n + r.unacknowledged, 0);
if (unacknowledged > 0) console.log(`\n${unacknowledged} stored trace(s) were never acknowledged.`);
process.exit(rows.some((r) => r.lost > 0 || r.doubled > 0 || unacknowledged > 0) ? 1 : 0);
