/**
 * The freshness benchmark's record of each second, from the service's metrics endpoint (and /proc
 * for its RSS): the settle queue's depth and oldest due age, and what could make that age jump —
 * how long the settle rounds and their steps took (the PostgreSQL claim among them; of the summary
 * step, how long its tasks ran on the compute worker rather than waited for it), the longest wait of
 * an ingest prepare task for the worker, the ingest flushes' steps, the hooks waiting, the ClickHouse
 * engine's merges and active parts of `spans`, and the event loop's longest delay. Histograms are turned into what happened within the second (the
 * difference between two scrapes); "longest" is the upper bound of the bucket that holds the longest
 * observation (≤ 2.5: between the bound below and 2.5 s).
 *
 * Around every second whose oldest due age passes a limit, the seconds before and after it are
 * printed in full, so a spike can be set against what the service and the engine were doing.
 */
import { memoryMiB } from '../service-process.js';
import { histogramDelta, histogramOf, scrapeSamples, valueOf, type HistogramState, type Sample } from './freshness-probes.js';

const SETTLE_PHASES = ['claim', 'read', 'summarize', 'write', 'hooks', 'finish'] as const;
const FLUSH_PHASES = ['register', 'check', 'insert', 'record'] as const;
/** Seconds printed before and after a second past the limit. */
const AROUND = 5;

export interface SecondSample {
  t: number;
  depth: number;
  oldestS: number;
  rssMiB: number;
  /** Settle rounds that ended in this second, and the bucket bound of the longest. */
  rounds: number;
  roundLongest: number | null;
  /** Seconds spent in each settle step in this second (summed over the rounds and claims that ended in it). */
  settleSeconds: Record<(typeof SETTLE_PHASES)[number], number>;
  /** The longest PostgreSQL claim of the second (bucket bound). */
  claimLongest: number | null;
  /** Seconds the settle summary tasks that ended in this second ran on a worker (their time less their wait for it). */
  summaryRunSeconds: number;
  /** The longest wait for a worker of the ingest prepare tasks that ended in this second (bucket bound). */
  prepareWaitLongest: number | null;
  /** Seconds the ingest prepare tasks that ended in this second ran on a worker. */
  prepareRunSeconds: number;
  /** The longest of each flush step in this second (bucket bound). */
  flushLongest: Record<(typeof FLUSH_PHASES)[number], number | null>;
  hooksPending: number;
  merges: number;
  mergeBytes: number;
  mergeRowsRead: number;
  mergeProgress: number;
  mergeElapsedS: number;
  spansParts: number;
  loopLagMaxS: number;
  /** Traces settled since the service started, from the settler's memory and read back from ClickHouse. */
  settledFromMemory: number;
  settledReadBack: number;
  /** Traces read back since the service started, by reason (lookout_settle_read_backs_total). */
  readBackReasons: Record<string, number>;
  /** Whether the ingest writer paced its flushes for settling to catch up (lookout_ingest_catching_up). */
  catchingUp: boolean;
}

/** Samples the service once a second (call `sample` every second); keeps the histograms of the last scrape. */
export class SecondSampler {
  private previous = new Map<string, HistogramState>();

  constructor(
    private readonly metricsUrl: string,
    private readonly pid: number,
    private readonly started: number,
  ) {}

  /** One second's record, or null when the scrape failed (the next one reads again). */
  async sample(): Promise<SecondSample | null> {
    let samples: Sample[];
    try {
      samples = await scrapeSamples(this.metricsUrl);
    } catch {
      return null;
    }
    const delta = (name: string, labels: Record<string, string> = {}) => {
      const key = `${name}${JSON.stringify(labels)}`;
      const now = histogramOf(samples, name, labels);
      const d = histogramDelta(this.previous.get(key), now);
      this.previous.set(key, now);
      return d;
    };
    const gauge = (name: string, labels: Record<string, string> = {}) => valueOf(samples, name, labels) ?? 0;
    const round = delta('lookout_settle_round_duration_seconds');
    const settleSeconds = {} as SecondSample['settleSeconds'];
    let claimLongest: number | null = null;
    for (const phase of SETTLE_PHASES) {
      const d = delta('lookout_settle_phase_duration_seconds', { phase });
      settleSeconds[phase] = d.sum;
      if (phase === 'claim') claimLongest = d.longest;
    }
    const summaries = delta('lookout_compute_task_duration_seconds', { task: 'settle-summaries' });
    const summaryWaits = delta('lookout_compute_task_wait_seconds', { task: 'settle-summaries' });
    const prepares = delta('lookout_compute_task_duration_seconds', { task: 'prepare-ingest' });
    const prepareWaits = delta('lookout_compute_task_wait_seconds', { task: 'prepare-ingest' });
    const flushLongest = {} as SecondSample['flushLongest'];
    for (const phase of FLUSH_PHASES) flushLongest[phase] = delta('lookout_ingest_flush_phase_duration_seconds', { phase }).longest;
    return {
      t: (Date.now() - this.started) / 1000,
      depth: gauge('lookout_settle_queue_depth'),
      oldestS: gauge('lookout_settle_oldest_due_age_seconds'),
      rssMiB: memoryMiB(this.pid, 'VmRSS'),
      rounds: round.count,
      roundLongest: round.longest,
      settleSeconds,
      claimLongest,
      summaryRunSeconds: Math.max(0, summaries.sum - summaryWaits.sum),
      prepareWaitLongest: prepareWaits.longest,
      prepareRunSeconds: Math.max(0, prepares.sum - prepareWaits.sum),
      flushLongest,
      hooksPending: gauge('lookout_trace_hooks_pending'),
      merges: gauge('lookout_clickhouse_merges_running'),
      mergeBytes: gauge('lookout_clickhouse_merge_largest_bytes'),
      mergeRowsRead: gauge('lookout_clickhouse_merge_largest_rows_read'),
      mergeProgress: gauge('lookout_clickhouse_merge_largest_progress_ratio'),
      mergeElapsedS: gauge('lookout_clickhouse_merge_largest_elapsed_seconds'),
      spansParts: gauge('lookout_clickhouse_active_parts', { table: 'spans' }),
      loopLagMaxS: gauge('nodejs_eventloop_lag_max_seconds'),
      settledFromMemory: gauge('lookout_settle_traces_total', { source: 'memory' }),
      settledReadBack: gauge('lookout_settle_traces_total', { source: 'read_back' }),
      readBackReasons: Object.fromEntries(samples.filter((x) => x.name === 'lookout_settle_read_backs_total').map((x) => [x.labels.reason, x.value])),
      catchingUp: gauge('lookout_ingest_catching_up') === 1,
    };
  }
}

/** A bucket bound as printed: ≤ the bound, > the last one, '-' for nothing observed. */
function bound(le: number | null): string {
  if (le === null) return '-';
  return Number.isFinite(le) ? `≤${le}` : '>60';
}

const HEADER =
  '     t  depth oldest | rounds longest  claim  read  summ   run write hooks finish | prepare wait   run | flush: register  check insert record | hooks | merges  largest: MB  rows read    %     s | spans parts | loop max ms';

function line(s: SecondSample, past: boolean): string {
  const p = s.settleSeconds;
  const f = s.flushLongest;
  const sec = (v: number) => v.toFixed(2).padStart(5);
  return [
    `${past ? '*' : ' '}${String(Math.round(s.t)).padStart(5)} ${String(s.depth).padStart(6)} ${s.oldestS.toFixed(1).padStart(6)}`,
    `${String(s.rounds).padStart(6)} ${bound(s.roundLongest).padStart(7)} ${bound(s.claimLongest).padStart(6)} ${sec(p.read)} ${sec(p.summarize)} ${sec(s.summaryRunSeconds)} ${sec(p.write)} ${sec(p.hooks)} ${sec(p.finish).padStart(6)}`,
    `${bound(s.prepareWaitLongest).padStart(12)} ${sec(s.prepareRunSeconds)}`,
    `      ${bound(f.register).padStart(9)} ${bound(f.check).padStart(6)} ${bound(f.insert).padStart(6)} ${bound(f.record).padStart(6)}`,
    `${String(s.hooksPending).padStart(5)}`,
    `${String(s.merges).padStart(6)} ${(s.mergeBytes / 1048576).toFixed(0).padStart(12)} ${String(s.mergeRowsRead).padStart(10)} ${(s.mergeProgress * 100).toFixed(0).padStart(4)} ${s.mergeElapsedS.toFixed(0).padStart(5)}`,
    `${String(s.spansParts).padStart(11)}`,
    `${(s.loopLagMaxS * 1000).toFixed(0).padStart(11)}`,
  ].join(' | ');
}

/**
 * Prints, for every second whose oldest due age passes `overMs` or whose longest decoding wait
 * passes `prepareOverMs` (by its bucket's upper bound: a wait in (1, 2.5] s passes 1000), the seconds from AROUND
 * before to AROUND after it (overlapping stretches merged; the seconds past a limit marked `*`).
 * Settle step columns are the seconds spent in each step by the rounds that ended in that second.
 */
export function printAroundSpikes(series: SecondSample[], overMs: number, prepareOverMs = Infinity): void {
  const past = series.map((s) => s.oldestS * 1000 > overMs || (s.prepareWaitLongest ?? 0) * 1000 > prepareOverMs);
  const shown = series.map((_s, i) => past.slice(Math.max(0, i - AROUND), i + AROUND + 1).some(Boolean));
  if (!shown.some(Boolean)) return;
  const prepare = Number.isFinite(prepareOverMs) ? ` or the longest decoding wait passing ${prepareOverMs} ms` : '';
  console.log(`  seconds around the oldest due age passing ${overMs} ms${prepare} (settle steps: seconds spent; longest: bucket bound, s):`);
  console.log(`  ${HEADER}`);
  let gap = false;
  for (const [i, s] of series.entries()) {
    if (!shown[i]) {
      gap = true;
      continue;
    }
    if (gap && i > 0 && shown.slice(0, i).some(Boolean)) console.log('  ...');
    gap = false;
    console.log(`  ${line(s, past[i])}`);
  }
}
