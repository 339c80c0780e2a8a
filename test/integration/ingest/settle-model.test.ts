/**
 * A model-based test of the write and settle path (the writer's duplicate check over the
 * stored-trace registry, the settle queue and the settle cache): random interleavings of sends,
 * re-sends, concurrent sends, flushes failing at each step, settle rounds failing, waits and
 * restarts, checked against a reference model that is only "the spans whose request was answered
 * 200". Whatever the interleaving, once everything has settled: every acknowledged span is stored
 * exactly once, nothing unacknowledged is, and each trace's summary (span count, tokens) and
 * model-call rows are what its acknowledged spans make — whether it was settled from memory or read back.
 *
 * Merges are stopped on the per-span tables so that a doubled row stays visible to the counts
 * (the engine would fold it away otherwise); the counts read with pending deletes applied, as the
 * writer does, since a failed flush's delete cannot apply while merges are stopped.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestService } from '../../../src/ingest/ingest-module.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { agentRun } from '../../helpers/agent-run.js';
import { failingInserts } from '../../helpers/failing-inserts.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { jsonBody, postOtlp, waitFor } from './otlp-client.js';
import { seededRandom } from '../../helpers/seeded-random.js';

/** Seeds of the interleavings run on every test run (a failure prints its seed and steps). */
const SEEDS = [1, 7, 42];
const STEPS = 36;
const PER_SPAN_TABLES = ['spans', 'event_generation_completed', 'event_tool_called', 'event_span_errored'];

let dataDir: string;
let opened: ClickHouseStore;
let svc: TestService;
let projectId: string;
/** The next insert into this table fails once (a store failing in the middle of a flush or a round). */
let failNextInsert: string | null = null;
/** The next settle-queue upsert of a flush fails once (after every insert of the flush landed). */
let failNextRecord = false;

async function start(): Promise<void> {
  svc = await startTestService({ TRACE_SETTLE_MS: '150', TRACE_MAX_WAIT_MS: '1500' }, dataDir, { clickhouse: ch() });
  const settler = ingestService(svc.service.deps).settler;
  const record = settler.record.bind(settler);
  settler.record = async (notes) => {
    if (failNextRecord) {
      failNextRecord = false;
      throw new Error('settle queue unavailable (test)');
    }
    await record(notes);
  };
}

/** The shared store with failures injected on demand; it outlives the service across restarts. */
function ch(): ClickHouseStore {
  const failHere = (table: string) => {
    if (failNextInsert === null || table !== opened.table(failNextInsert)) return false;
    failNextInsert = null;
    return true;
  };
  return { ...opened, ...failingInserts(opened, failHere) };
}

beforeAll(async () => {
  dataDir = tempDataDir('lookout-settle-model-');
  // The store opened here starts migrated, as the service's own would (test/helpers/migrated-stores.ts).
  await copyMigratedStores(dataDir, { postgres: false, clickhouse: true });
  opened = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir });
  await start();
  for (const table of PER_SPAN_TABLES) await opened.client.command({ query: `SYSTEM STOP MERGES ${opened.table(table)}` });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  for (const table of PER_SPAN_TABLES) await opened?.client.command({ query: `SYSTEM START MERGES ${opened.table(table)}` }).catch(() => undefined);
  await opened?.close();
  if (dataDir) removeDir(dataDir);
});

async function send(spans: ReadableSpan[]): Promise<number> {
  const answer = await postOtlp(svc.url, svc.adminKey, jsonBody(spans), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
  return answer.status;
}

async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
  const result = await opened.client.query({
    query,
    query_params: params,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0, apply_mutations_on_fly: 1 },
  });
  return result.json<T>();
}

/** What is stored per trace of the project: span rows, distinct spans, generation rows, and the latest summary. */
async function stored(): Promise<Map<string, { rows: number; spans: number; generations: number; summary?: { spans: number; tokens: number } }>> {
  const byTrace = new Map<string, { rows: number; spans: number; generations: number; summary?: { spans: number; tokens: number } }>();
  const p = { p: projectId };
  for (const r of await rows<{ trace_id: string; rows: number; spans: number }>(
    `SELECT trace_id, count() AS rows, uniqExact(span_id) AS spans FROM ${opened.table('spans')} WHERE project_id = {p:String} GROUP BY trace_id`,
    p,
  )) {
    byTrace.set(r.trace_id, { rows: r.rows, spans: r.spans, generations: 0 });
  }
  for (const r of await rows<{ trace_id: string; n: number }>(
    `SELECT toString(trace_id) AS trace_id, count() AS n FROM ${opened.table('event_generation_completed')} FINAL WHERE project_id = {p:String} GROUP BY trace_id`,
    p,
  )) {
    const entry = byTrace.get(r.trace_id) ?? { rows: 0, spans: 0, generations: 0 };
    entry.generations = r.n;
    byTrace.set(r.trace_id, entry);
  }
  for (const r of await rows<{ trace_id: string; spans: number; tokens: number }>(
    `SELECT trace_id, span_count AS spans, total_tokens AS tokens FROM ${opened.table('traces')} FINAL WHERE project_id = {p:String} AND preview = 0`,
    p,
  )) {
    const entry = byTrace.get(r.trace_id) ?? { rows: 0, spans: 0, generations: 0 };
    entry.summary = { spans: r.spans, tokens: r.tokens };
    byTrace.set(r.trace_id, entry);
  }
  return byTrace;
}

/** Waits until the settle queue is empty and every acknowledged trace's summary counts all its spans. */
async function settledAll(model: Map<string, Set<string>>, spansOf: Map<string, Map<string, ReadableSpan>>): Promise<void> {
  await waitFor(
    async () => {
      if ((await queueDepth(svc.service.deps.sql)) !== 0) return undefined;
      const now = await stored();
      for (const [traceId, acknowledged] of model) {
        if (acknowledged.size === 0) continue;
        if (now.get(traceId)?.summary?.spans !== acknowledged.size) return undefined;
      }
      return true;
    },
    60_000,
    `every trace settled (${[...spansOf.keys()].length} traces)`,
  );
}

describe('writes and settling against a reference model', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: every acknowledged span stored once, nothing else, summaries exact`, { timeout: 240_000 }, async () => {
      // A project per seed: the check that nothing else is stored looks at the whole project.
      projectId = (await svc.newProject(`settle model ${seed}`)).id;
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
      // Six agent runs of 1–5 model calls; each step sends a random part of one or two of them.
      const runs = Array.from({ length: 6 }, (_, i) => agentRun(1 + (i % 5), `model-agent-${seed}`));
      const spansOf = new Map<string, Map<string, ReadableSpan>>();
      const model = new Map<string, Set<string>>();
      for (const run of runs) {
        const traceId = lookoutTraceId(projectId, run.otelTraceId);
        spansOf.set(traceId, new Map([run.root, ...run.children].map((s) => [s.spanContext().spanId, s])));
        model.set(traceId, new Set());
      }
      const traceOf = (span: ReadableSpan) => lookoutTraceId(projectId, span.spanContext().traceId);
      const randomPart = (): ReadableSpan[] => {
        const spans = [...pick([...spansOf.values()]).values()].filter(() => random() < 0.6);
        if (random() < 0.3) spans.push(...[...pick([...spansOf.values()]).values()].filter(() => random() < 0.5));
        // A span sent twice in one request now and then.
        if (spans.length > 0 && random() < 0.15) spans.push(spans[0]);
        return spans;
      };
      const acknowledge = (spans: ReadableSpan[]) => {
        for (const s of spans) model.get(traceOf(s))!.add(s.spanContext().spanId);
      };
      const steps: string[] = [];
      let restarts = 0;
      for (let step = 0; step < STEPS; step++) {
        const roll = random();
        if (roll < 0.45) {
          const spans = randomPart();
          if (spans.length === 0) continue;
          const status = await send(spans);
          steps.push(`send ${spans.length} → ${status}`);
          expect(status, steps.join('; ')).toBe(200);
          acknowledge(spans);
        } else if (roll < 0.6) {
          // Two or three requests at once: they share a flush.
          const parts = Array.from({ length: 2 + Math.floor(random() * 2) }, randomPart).filter((p) => p.length > 0);
          const statuses = await Promise.all(parts.map(send));
          steps.push(`concurrent ${parts.map((p) => p.length).join('+')} → ${statuses.join(',')}`);
          expect(statuses.every((s) => s === 200), steps.join('; ')).toBe(true);
          parts.forEach(acknowledge);
        } else if (roll < 0.8) {
          // A flush failing at one of its steps: 503, nothing of it acknowledged.
          const where = pick(['event_generation_completed', 'event_tool_called', 'spans', 'record']);
          if (where === 'record') failNextRecord = true;
          else failNextInsert = where;
          const spans = randomPart();
          if (spans.length === 0) {
            failNextInsert = null;
            failNextRecord = false;
            continue;
          }
          const status = await send(spans);
          steps.push(`failing at ${where}: send ${spans.length} → ${status}`);
          // A flush with nothing new to insert into the failing table goes through whole.
          if (status === 200) acknowledge(spans);
          else expect(status, steps.join('; ')).toBe(503);
          failNextInsert = null;
          failNextRecord = false;
        } else if (roll < 0.88) {
          // A settle round failing at its writes: retried, once.
          failNextInsert = pick(['event_trace_processed', 'traces']);
          steps.push(`settle round failing at ${failNextInsert}`);
          await new Promise((r) => setTimeout(r, 400));
          failNextInsert = null;
        } else if (roll < 0.96 || restarts >= 2) {
          steps.push('wait');
          await new Promise((r) => setTimeout(r, 300 + random() * 500));
        } else {
          // A restart: the settle cache is gone; unsettled traces are read back from the stores.
          restarts++;
          steps.push('restart');
          await svc.stop();
          await start();
        }
      }
      await settledAll(model, spansOf);
      const now = await stored();
      const context = `seed ${seed}: ${steps.join('; ')}`;
      for (const [traceId, acknowledged] of model) {
        const calls = [...acknowledged].filter((id) => spansOf.get(traceId)!.get(id)!.name.startsWith('chat')).length;
        const expected = acknowledged.size === 0 ? undefined : { rows: acknowledged.size, spans: acknowledged.size, generations: calls, summary: { spans: acknowledged.size, tokens: 12 * calls } };
        expect(now.get(traceId), `${traceId}; ${context}`).toEqual(expected);
      }
      expect([...now.keys()].filter((t) => !model.has(t)), context).toEqual([]);
    });
  }
});
