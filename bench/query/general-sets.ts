/**
 * The general view's generations statement (src/analytics/views/general-view.ts) beside exact
 * rewrites that do not keep every tps value in a (model) grouping set that only needs count()
 * (issue 17). A fresh engine, N generation rows over 30 days in K time-ordered inserts (as
 * ingestion lays per-span rows out), merges stopped: "as inserted"; then OPTIMIZE … FINAL: "merged".
 * Every variant's answer is reduced to what the view returns (per-date series and percentiles, top
 * models, totals; avg(tps) at 11 significant digits) and compared with the current statement's, so a
 * faster variant that changes a figure prints WRONG. Rounds interleave the variants.
 *
 *   npx tsx bench/query/general-sets.ts [--generations 4000000] [--inserts 16] [--runs 9]
 *                                       [--granularity day|week|month] [--only TEXT]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';
import { spanIdSql, traceIdSql } from './seed-ids.js';

const args = process.argv.slice(2);
const text = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : null;
};
const GENERATIONS = Number(text('generations') ?? 4_000_000);
const INSERTS = Number(text('inserts') ?? 16);
const RUNS = Number(text('runs') ?? 9);
const GRANULARITY = text('granularity') ?? 'day';
const ONLY = text('only');
const DAY = 86_400_000;
const BUCKETS: Record<string, string> = { day: 'toDate(timestamp)', week: 'toStartOfWeek(timestamp, 0)', month: 'toStartOfMonth(timestamp)' };
const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

type Row = Record<string, unknown>;

/** What the view makes of the rows: per-date figures, model counts, totals — the shape every variant must reach. */
interface Answer {
  dates: Record<string, unknown[]>;
  models: Record<string, number>;
  total: unknown[];
}

// avg(tps) sums floats in an order that changes between runs of the same statement (threads): it
// is compared at 11 significant digits, every other figure exactly.
const figures = (r: Row) =>
  [r.requests, r.errors, r.speed == null ? 'null' : Number(r.speed).toPrecision(11), r.speed_known, r.speed_q, r.prompt_tokens, r.completion_tokens].map(String);

function variants(gen: string, where: string) {
  const bucket = BUCKETS[GRANULARITY];
  const before = `SELECT ${bucket} AS date, model, grouping(date) = 0 AS by_date, grouping(model) = 0 AS by_model,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, quantilesExact(0.5, 0.95, 0.99)(tps) AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens
FROM ${gen} FINAL WHERE ${where}
GROUP BY GROUPING SETS ((date), (model), ())`;
  // Rows of the current form → Answer.
  const fromSets = (rows: Row[]): Answer => ({
    dates: Object.fromEntries(rows.filter((r) => Number(r.by_date) === 1).map((r) => [String(r.date), figures(r)])),
    models: Object.fromEntries(rows.filter((r) => Number(r.by_model) === 1).map((r) => [String(r.model), Number(r.requests)])),
    total: figures(rows.find((r) => Number(r.by_date) === 0 && Number(r.by_model) === 0) ?? {}),
  });
  // Rows with (date), () sets and the model counts as a map on the total row → Answer.
  const fromTotalMap = (rows: Row[], extra: Row[] = []): Answer => {
    const total = rows.find((r) => Number(r.by_date) === 0) ?? {};
    const map = (total.models ?? {}) as Record<string, unknown>;
    const models = extra.length > 0 ? Object.fromEntries(extra.map((r) => [String(r.model), Number(r.requests)])) : Object.fromEntries(Object.entries(map).map(([k, v]) => [k, Number(v)]));
    return { dates: Object.fromEntries(rows.filter((r) => Number(r.by_date) === 1).map((r) => [String(r.date), figures(r)])), models, total: figures(total) };
  };
  const inner = (q: string) => `SELECT ${bucket} AS date, model, count() AS c, sum(error) AS e, avgState(tps) AS a, count(tps) AS k,
    ${q} AS q, sum(input_tokens) AS i, sum(output_tokens) AS o
  FROM ${gen} FINAL WHERE ${where} GROUP BY date, model`;
  return {
    before: { sql: [before], answer: (r: Row[][]) => fromSets(r[0]) },
    // a) one hash per row into (date, model); the few hundred states then feed (date) and () only;
    // the per-model counts come from the total row's map over those rows.
    'two levels, (date), () + model map': {
      sql: [
        `SELECT date, grouping(date) = 0 AS by_date, sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known,
  quantilesExactMerge(0.5, 0.95, 0.99)(q) AS speed_q, sum(i) AS prompt_tokens, sum(o) AS completion_tokens, sumMap(map(model, c)) AS models
FROM (${inner('quantilesExactState(0.5, 0.95, 0.99)(tps)')})
GROUP BY GROUPING SETS ((date), ())`,
      ],
      answer: (r: Row[][]) => fromTotalMap(r[0]),
    },
    // a') the same with groupArray states, quantiles taken once per set over the concatenated arrays.
    'two levels, groupArray': {
      sql: [
        `SELECT date, grouping(date) = 0 AS by_date, sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known,
  quantilesExactArray(0.5, 0.95, 0.99)(q) AS speed_q, sum(i) AS prompt_tokens, sum(o) AS completion_tokens, sumMap(map(model, c)) AS models
FROM (${inner('groupArray(tps)')})
GROUP BY GROUPING SETS ((date), ())`,
      ],
      answer: (r: Row[][]) => fromTotalMap(r[0]),
    },
    // a'') as a), the total rolled up from the per-date states (ROLLUP merges the aggregated
    // states) where GROUPING SETS feeds every input row to every set again.
    'two levels, date WITH ROLLUP + model map': {
      sql: [
        `SELECT date, grouping(date) = 0 AS by_date, sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known,
  quantilesExactMerge(0.5, 0.95, 0.99)(q) AS speed_q, sum(i) AS prompt_tokens, sum(o) AS completion_tokens, sumMap(map(model, c)) AS models
FROM (${inner('quantilesExactState(0.5, 0.95, 0.99)(tps)')})
GROUP BY date WITH ROLLUP`,
      ],
      answer: (r: Row[][]) => fromTotalMap(r[0]),
    },
    // One level: (date, model), (date), () by ROLLUP; the (date, model) rows' quantiles are finalized and dropped.
    'date, model WITH ROLLUP': {
      sql: [
        `SELECT ${bucket} AS date, model, grouping(date) = 0 AS by_date, grouping(model) = 0 AS by_model,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, quantilesExact(0.5, 0.95, 0.99)(tps) AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens
FROM ${gen} FINAL WHERE ${where}
GROUP BY date, model WITH ROLLUP`,
      ],
      answer: (r: Row[][]) => {
        const rows = r[0].map((x) => ({ ...x, by_date: Number(x.by_date) === 1 && Number(x.by_model) === 0 ? 1 : 0, by_model: 0 }));
        const models = new Map<string, number>();
        for (const x of r[0]) if (Number(x.by_model) === 1) models.set(String(x.model), (models.get(String(x.model)) ?? 0) + Number(x.requests));
        const a = fromSets(rows.filter((x, i) => Number(r[0][i].by_model) === 0));
        return { ...a, models: Object.fromEntries(models) };
      },
    },
    // One level: (date) from the rows, () rolled up from the per-date states; model counts as a map
    // built per row (arrays of one element).
    'date WITH ROLLUP + sumMap per row': {
      sql: [
        `SELECT ${bucket} AS date, grouping(date) = 0 AS by_date,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, quantilesExact(0.5, 0.95, 0.99)(tps) AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens, sumMap([model], [toUInt64(1)]) AS m
FROM ${gen} FINAL WHERE ${where}
GROUP BY date WITH ROLLUP`,
      ],
      answer: (r: Row[][]) => {
        const total = r[0].find((x) => Number(x.by_date) === 0);
        const [keys, counts] = (total?.m ?? [[], []]) as [string[], unknown[]];
        return { ...fromTotalMap(r[0]), models: Object.fromEntries(keys.map((k, i) => [k, Number(counts[i])])) };
      },
    },
    '~date WITH ROLLUP, no model counts': {
      sql: [
        `SELECT ${bucket} AS date, grouping(date) = 0 AS by_date,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, quantilesExact(0.5, 0.95, 0.99)(tps) AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens
FROM ${gen} FINAL WHERE ${where}
GROUP BY date WITH ROLLUP`,
      ],
      answer: () => null,
    },
    // Each row copied three times (arrayJoin) and grouped by one key per copy: 0 per date, 1 per
    // model, 2 the total; the model copy skips the quantile and the sums (-If), which a grouping
    // set cannot do (every set computes every aggregate).
    'three copies, model copy counts only': {
      sql: [
        `SELECT s, if(s = 0, ${bucket}, ${bucket.replace('timestamp', 'toDateTime(0)')}) AS date, if(s = 1, model, '') AS m, s = 0 AS by_date, s = 1 AS by_model, m AS model,
  count() AS requests, sumIf(error, s != 1) AS errors, avgIf(tps, s != 1) AS speed, countIf(tps, s != 1) AS speed_known,
  quantilesExactIf(0.5, 0.95, 0.99)(tps, s != 1) AS speed_q, sumIf(input_tokens, s != 1) AS prompt_tokens, sumIf(output_tokens, s != 1) AS completion_tokens
FROM (SELECT timestamp, model, error, tps, input_tokens, output_tokens, arrayJoin([0, 1, 2]) AS s FROM ${gen} FINAL WHERE ${where})
GROUP BY s, date, m`,
      ],
      answer: (r: Row[][]) => fromSets(r[0]),
    },
    // b) two statements at once: (date), () with the quantiles; the model counts alone.
    'two statements': {
      sql: [
        `SELECT ${bucket} AS date, grouping(date) = 0 AS by_date,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, quantilesExact(0.5, 0.95, 0.99)(tps) AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens
FROM ${gen} FINAL WHERE ${where}
GROUP BY GROUPING SETS ((date), ())`,
        `SELECT model, count() AS requests FROM ${gen} FINAL WHERE ${where} GROUP BY model`,
      ],
      answer: (r: Row[][]) => fromTotalMap(r[0], r[1]),
    },
    // Timed only, to split the cost: the statement without the (model) set; with one set only.
    '~(date), () sets only': { sql: [before.replace(', model, grouping', ', grouping').replace('grouping(model) = 0 AS by_model,', '').replace('((date), (model), ())', '((date), ())')], answer: () => null },
    '~GROUP BY date only': { sql: [before.replace(', model, grouping', ', grouping').replace('grouping(model) = 0 AS by_model,', '').replace('GROUPING SETS ((date), (model), ())', 'date')], answer: () => null },
    '~without quantiles (what they cost)': { sql: [before.replace('quantilesExact(0.5, 0.95, 0.99)(tps)', '[0]')], answer: () => null },
  } as Record<string, { sql: string[]; answer: (rows: Row[][]) => Answer | null }>;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-general-'));
  fs.chmodSync(dataDir, 0o755);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: 'lk_bench_general_key_0123456789abcdef', LOG_LEVEL: 'silent', QUERY_TIMEOUT_SECONDS: '120' });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const ch = service.deps.ch;
    const gen = ch.table('event_generation_completed');
    const end = Math.floor(Date.now() / DAY) * DAY;
    const start = end - 30 * DAY;
    const params = { t: 'bench-tenant', p: 'bench-project', from: chTime(start), n: String(GENERATIONS) };
    let t0 = performance.now();
    // Insert i holds the i-th stretch of the month, rows in time order: parts that do not overlap.
    const spanId = await spanIdSql(ch, 'event_generation_completed', 'number');
    for (let i = 0; i < INSERTS; i++) {
      const first = Math.floor((GENERATIONS * i) / INSERTS);
      const count = Math.floor((GENERATIONS * (i + 1)) / INSERTS) - first;
      await ch.client.command({
        query: `INSERT INTO ${gen}
          (tenant_id, project_id, timestamp, actor, surface, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, tps, error)
          SELECT {t:String}, {p:String}, toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${30 * DAY}, {n:UInt64})), 'sdk', 'otlp',
            ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'in-house-model', '', 'mistral-large'][1 + cityHash64(number, 2) % 6], if(number % 11 = 0, '', 'openai'),
            ${traceIdSql('number')}, ${spanId},
            (cityHash64(number, 3) % 600000) / 100, cityHash64(number, 4) % 8000, cityHash64(number, 5) % 2000,
            if(number % 7 = 0, NULL, (cityHash64(number, 6) % 20000) / 100), if(number % 23 = 0, 1, 0)
          FROM numbers(${first}, ${count})`,
        query_params: params,
      });
      if (i === 0) await ch.client.command({ query: `SYSTEM STOP MERGES ${gen}` });
    }
    console.log(`seeded ${GENERATIONS} generations in ${INSERTS} inserts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const where = `tenant_id = 'bench-tenant' AND project_id = 'bench-project' AND timestamp >= toDateTime64('${chTime(start)}', 3, 'UTC') AND timestamp < toDateTime64('${chTime(end)}', 3, 'UTC')`;
    const all = Object.entries(variants(gen, where)).filter(([label]) => !ONLY || label === 'before' || ONLY.split(',').some((o) => label.includes(o)));
    const run = async (statements: string[]): Promise<Row[][]> =>
      Promise.all(
        statements.map(async (query) => {
          const r = await ch.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } });
          return r.json<Row>();
        }),
      );
    const canonical = (a: Answer | null) => JSON.stringify(a, (_, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v));
    for (const state of ['as inserted', 'merged']) {
      if (state === 'merged') {
        t0 = performance.now();
        await ch.client.command({ query: `SYSTEM START MERGES ${gen}` });
        await ch.client.command({ query: `OPTIMIZE TABLE ${gen} FINAL` });
        console.log(`\nOPTIMIZE FINAL in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
      const parts = await run([`SELECT count() AS parts FROM system.parts WHERE database = '${ch.database}' AND table = 'event_generation_completed' AND active`]);
      const expected = all[0][1].answer(await run(all[0][1].sql));
      const verdict: Record<string, string> = {};
      for (const [label, v] of all) {
        if (label.startsWith('~')) verdict[label] = 'other answer';
        else {
          const got = v.answer(await run(v.sql));
          verdict[label] = canonical(got) === canonical(expected) ? 'same' : 'WRONG';
          if (verdict[label] === 'WRONG') console.log(`${label}: ${canonical(got)}\n  vs ${canonical(expected)}`);
        }
      }
      const times = new Map(all.map(([label]) => [label, [] as number[]]));
      const loadBefore = os.loadavg()[0];
      for (let i = 0; i < RUNS; i++) {
        for (const [label, v] of all) {
          const s = performance.now();
          await run(v.sql);
          times.get(label)!.push(performance.now() - s);
        }
      }
      console.log(`\n${state} (${parts[0][0].parts} parts, granularity ${GRANULARITY}, ${RUNS} runs; load ${loadBefore.toFixed(1)} → ${os.loadavg()[0].toFixed(1)})`);
      for (const [label, list] of times) {
        list.sort((a, b) => a - b);
        console.log(`  ${label.padEnd(40)} p50 ${percentile(list, 0.5).toFixed(0).padStart(6)}  p95 ${percentile(list, 0.95).toFixed(0).padStart(6)}  ${verdict[label]}`);
      }
    }
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
