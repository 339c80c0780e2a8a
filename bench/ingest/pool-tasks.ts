/**
 * Micro-benchmark of the compute pool's two ingest tasks on the ingest bench's own batches, run
 * inline on this thread: prepare-ingest (decode → rows encoded for the insert) and settle-summaries
 * from memory (the settler's task over the rows prepare wrote, priced with the bundled catalog).
 * Prints thread-CPU ms per 1000 spans per round and the median; pricing alone is timed apart, and
 * so is the settle answers' trip back (structured clone, both sides) with the hooks unpacked.
 *
 *   nice -n 10 npx tsx bench/ingest/pool-tasks.ts [--batches 20] [--rounds 11]
 *
 * To compare a change, run it on the old and the new code back to back, a few times alternated
 * (the machine is shared: absolute figures vary, the ratio of medians taken in the same minutes holds).
 */
import { syntheticBatch } from './synthetic-batch.js';
import { prepareIngest } from '../../src/ingest/write/ingest-prepare.js';
import { lineOf, traceKeyOf } from '../../src/ingest/write/encoded-rows.js';
import { unpackHook } from '../../src/ingest/settle/packed-hook.js';
import { settleSummaries, type SettleTraceInput } from '../../src/ingest/settle/settle-summaries.js';
import { createPriceTrace } from '../../src/cost/ingest-pricing.js';
import { loadBundledCatalog } from '../../src/cost/price-catalog.js';
import { SYSTEM_ORIGIN } from '../../src/spans/origin.js';
import { threadCpuNs } from '../../src/platform/compute/thread-cpu.js';
import type { UsageToPrice } from '../../src/spans/trace-pricing.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const batches = arg('batches', 20);
const rounds = arg('rounds', 11);
const SPANS = 1000;

const bodies = Array.from({ length: batches }, () => syntheticBatch(SPANS).protobuf);
const catalog = await loadBundledCatalog();
const priceTrace = createPriceTrace({ current: () => catalog });

function prepareAll() {
  return bodies.map((body) => {
    const r = prepareIngest({ body, encoding: 'protobuf', tenantId: 't1', fixedProject: 'p1', origin: SYSTEM_ORIGIN });
    if (r.kind !== 'prepared') throw new Error(r.kind);
    return r;
  });
}

/** The settle task's input as the settler builds it from memory: each trace's `spans` lines and tool rows. */
function settleInputs(prepared: ReturnType<typeof prepareAll>): SettleTraceInput[] {
  const traces: SettleTraceInput[] = [];
  for (const p of prepared) {
    for (const t of p.traces) {
      const lines: Uint8Array[] = [];
      for (let i = t.spanRange[0]; i < t.spanRange[1]; i++) lines.push(lineOf(p.rows.spans, i));
      traces.push({
        key: traceKeyOf({ tenant_id: t.tenantId, project_id: t.projectId, trace_id: t.traceId }),
        origin: t.origin,
        rows: Buffer.concat(lines),
        writtenTools: t.toolRows,
        firstProcessing: true,
      });
    }
  }
  return traces;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perThousand = (ns: number) => ns / 1e6 / ((batches * SPANS) / 1000);

const usages: UsageToPrice[] = [];
const prepareMs: number[] = [];
const settleMs: number[] = [];
const pricingMs: number[] = [];
const answerMs: number[] = [];
const processedAt = '2026-11-24 12:00:00.000';
for (let round = 0; round < rounds; round++) {
  let t0 = threadCpuNs();
  const prepared = prepareAll();
  prepareMs.push(perThousand(threadCpuNs() - t0));
  const traces = settleInputs(prepared);
  const recording = (u: UsageToPrice) => (usages.push(u), priceTrace(u));
  t0 = threadCpuNs();
  const answers: ReturnType<typeof settleSummaries>[] = [];
  for (let i = 0; i < traces.length; i += 100) answers.push(settleSummaries({ processedAt, traces: traces.slice(i, i + 100) }, round === 0 ? recording : priceTrace));
  settleMs.push(perThousand(threadCpuNs() - t0));
  // What the answers cost to cross back (serialized on the pool, read on the event loop) and to unpack there.
  t0 = threadCpuNs();
  for (const answer of answers) for (const s of structuredClone(answer)) unpackHook(s.hook);
  answerMs.push(perThousand(threadCpuNs() - t0));
  if (round === 0) continue;
  t0 = threadCpuNs();
  for (const u of usages) priceTrace(u);
  pricingMs.push(perThousand(threadCpuNs() - t0));
}
const fmt = (xs: number[]) => `median ${median(xs).toFixed(2)} [${xs.map((x) => x.toFixed(1)).join(' ')}]`;
console.log(`prepare-ingest ms per 1000 spans: ${fmt(prepareMs)}`);
console.log(`settle-summaries ms per 1000 spans: ${fmt(settleMs)}`);
console.log(`pricing alone ms per 1000 spans: ${fmt(pricingMs)}`);
console.log(`settle answers cloned and unpacked ms per 1000 spans: ${fmt(answerMs)}`);
