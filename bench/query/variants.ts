/**
 * SQL variants of the heavy analytics statements, timed interleaved on one seeded data directory
 * (issue 17): each case is the statement the service runs today ("before") beside candidate
 * rewrites, every variant's answer compared with the before's (rows sorted, numbers as text) so a
 * faster variant that changes a single figure is reported as WRONG, not as a win.
 *
 *   npx tsx bench/query/views.ts --data-dir DIR --traces 200000 --generations 2000000 --tools 600000 --runs 1
 *   npx tsx bench/query/variants.ts --data-dir DIR [--runs 15] [--only TEXT]
 *
 * The first seeds DIR (views.ts keeps it); this one opens it, so the two cannot run at once. Merges
 * are stopped while it runs, so every variant reads the same parts.
 * Statements are written out here with the values inlined (the service binds them): this is a
 * measuring tool, the views' own files stay the source of what runs.
 */
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';

const args = process.argv.slice(2);
const text = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : null;
};
const RUNS = Number(text('runs') ?? 15);
const DATA_DIR = text('data-dir');
const ONLY = text('only');
const KEY = 'lk_bench_views_key_0123456789abcdef';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

type Cases = Record<string, Record<string, string>>;

function cases(db: string, t: string, p: string, start: string, end: string): Cases {
  const days = Math.ceil((Date.parse(`${end}Z`.replace(' ', 'T')) - Date.parse(`${start}Z`.replace(' ', 'T'))) / 86_400_000);
  const gen = `\`${db}\`.event_generation_completed`;
  const tools = `\`${db}\`.event_tool_called`;
  const traces = `\`${db}\`.event_trace_processed`;
  const g = `tenant_id = '${t}' AND project_id = '${p}'`;
  const w = `timestamp >= toDateTime64('${start}', 3, 'UTC') AND timestamp < toDateTime64('${end}', 3, 'UTC')`;
  // Exact distinct traces: the per-span tables store trace_id as UUID since ClickHouse migration 009
  // (before it, text counted as UUID where canonical); the cases below were written for text ids.
  const uuidTraces = () => 'uniqExact(trace_id)';
  const models = (from: string, where: string) => `SELECT model AS g0, count() AS m0, quantileExactOrNull(0.95)(duration_ms) AS m1, sum(input_tokens) AS m2, sum(output_tokens) AS m3
FROM ${from} ${where} GROUP BY g0 ORDER BY m0 DESC, g0 ASC LIMIT 50`;
  const daily = (from: string, where: string) => `SELECT toDate(timestamp) AS g0, count() AS m0, countIf(error = 1) AS m1, avgOrNull(tps) AS m2
FROM ${from} ${where} GROUP BY g0 ORDER BY g0 ASC LIMIT 1000`;
  // As the bench's general hours=720 case asks it (granularity=week).
  const general = (from: string, where: string, q = 'quantilesExact(0.5, 0.95, 0.99)(tps)') => `SELECT toStartOfWeek(timestamp, 0) AS date, model, grouping(date) = 0 AS by_date, grouping(model) = 0 AS by_model,
  count() AS requests, sum(error) AS errors, avg(tps) AS speed, count(tps) AS speed_known, ${q} AS speed_q,
  sum(input_tokens) AS prompt_tokens, sum(output_tokens) AS completion_tokens
FROM ${from} ${where} GROUP BY GROUPING SETS ((date), (model), ())`;
  const toolAgg = (from: string, where: string, distinct = 'uniqExact(trace_id)') => `SELECT tool, count() AS calls, sum(error) AS errors, quantilesExact(0.5, 0.95)(duration_ms) AS duration_q,
  ${distinct} AS traces, sum(output_tokens) AS output_tokens,
  sumMap([toDate(timestamp)], [toUInt64(1)], [toUInt64(error)]) AS by_date
FROM ${from} ${where} GROUP BY tool ORDER BY calls DESC, tool ASC`;
  const scoreGen = (from: string, where: string, distinct = "uniqExactIf(trace_id, model = '')") => `SELECT model, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, avg(tps) AS avg_speed,
  arraySort(groupUniqArray(provider)) AS providers, ${distinct} AS unnamed_traces
FROM ${from} ${where} GROUP BY model`;
  const scoreTraces = (from: string, where: string) => `SELECT arrayJoin(models) AS model, count() AS traces FROM ${from} ${where} GROUP BY model`;
  const finalWhere = `WHERE ${g} AND ${w}`;
  // The cost module's stored pass (cost-sql.ts storedSql, ungrouped), as general and model_scorecard send it.
  const storedCost = (from: string, where = finalWhere) => `SELECT count() AS traces, countIf(estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_traces,
  countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced, sumIf(ifNull(estimated_cost_usd, 0), estimated_cost_basis IN ('stored', 'partial')) AS stored_cost,
  sumIf(cost_priced_tokens, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_tokens, sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_at,
  groupUniqArrayArrayIf(51)(cost_unpriced_models, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_unpriced_models
FROM ${from} ${where}`;
  const modelCosts = (from: string) => `SELECT tupleElement(kv, 1) AS model, sum(tupleElement(kv, 2)) AS cost FROM (SELECT arrayJoin(arrayZip(mapKeys(cost_model_costs), mapValues(cost_model_costs))) AS kv
  FROM ${from} ${finalWhere} AND estimated_cost_basis IN ('stored', 'partial')) GROUP BY model`;
  const noMerge = ' SETTINGS do_not_merge_across_partitions_select_final = 1';
  const written = "estimated_cost_basis IN ('stored', 'partial', 'unpriced')";
  const priced = "estimated_cost_basis IN ('stored', 'partial')";
  const prewhere = `PREWHERE ${g} AND ${w}`;
  // The first_processing split read of trace.processed (issue 17, round 4; measured slower than FINAL
  // on chdb 26.7, not adopted — processed-traces.ts reads FINAL): keys processed once plain, keys with a
  // first_processing = 0 row through FINAL. `preMark` sends every key through FINAL (the plain branch
  // empty, the set every trace): what rows written before migration 006 would cost.
  const w7 = `timestamp >= toDateTime64('${end}', 3, 'UTC') - INTERVAL 8 DAY AND timestamp < toDateTime64('${end}', 3, 'UTC')`;
  const processed = (where: string, preMark = false) => {
    const set = `(SELECT trace_id FROM ${traces} WHERE ${g} AND ${preMark ? '1' : 'first_processing = 0'})`;
    return `(SELECT * FROM ${traces} WHERE (${where}) AND ${preMark ? '0' : 'first_processing = 1'} AND trace_id GLOBAL NOT IN ${set}
  UNION ALL SELECT * FROM ${traces} FINAL PREWHERE ${g} AND trace_id GLOBAL IN ${set} WHERE ${where})`;
  };
  // The window view's trace.processed statement (window-view.ts, its coverage columns left out).
  const windowStmt = (from: string, where: string) => `SELECT toDate(timestamp) AS date, grouping(date) AS is_total, count() AS traces,
  countIf(has_root = 1 AND (root_status_code = 'ERROR' OR failing_tool_calls > 0)) AS failed, quantilesExact(0.5, 0.95)(root_duration_ms) AS latency_q,
  sum(generations) AS generations, sum(tool_calls) AS tool_calls, sumIf(ifNull(estimated_cost_usd, 0), ${priced}) AS stored_cost
FROM ${from} ${where} GROUP BY GROUPING SETS ((date), ())`;
  // model_scorecard's one pass (model-scorecard-view.ts): runs per model and both stored-cost aggregates.
  const scorecardPass = (from: string, where: string) => `SELECT count() AS traces, sumMap(models, arrayWithConstant(length(models), toUInt64(1))) AS runs_by_model,
  countIf(${written}) AS stored_traces, sumIf(ifNull(estimated_cost_usd, 0), ${priced}) AS stored_cost, sum(total_tokens) AS window_tokens,
  groupUniqArrayArrayIf(51)(cost_unpriced_models, ${written}) AS stored_unpriced_models,
  sumMapIf(mapKeys(cost_model_costs), mapValues(cost_model_costs), arrayWithConstant(length(cost_model_costs), toUInt64(1)), ${priced}) AS stored_model_costs
FROM ${from} ${where}`;
  const freeCases = (label: string, stmt: (from: string, where: string) => string, where: string) => ({
    [label]: {
      before: stmt(`${traces} FINAL`, `WHERE ${where}`),
      'first_processing split': stmt(processed(where), ''),
      'split, every row 0 (before 006)': stmt(processed(where, true), ''),
      '~plain read (what FINAL costs; not exact)': stmt(traces, `WHERE ${where}`),
    },
  });
  return {
    ...freeCases('trace.processed without FINAL: cost stored pass 30 d', (from, where) => storedCost(from, where), `${g} AND ${w}`),
    ...freeCases('trace.processed without FINAL: window 30 d', windowStmt, `${g} AND ${w}`),
    ...freeCases('trace.processed without FINAL: window 7 d', windowStmt, `${g} AND ${w7}`),
    ...freeCases('trace.processed without FINAL: model_scorecard pass 30 d', scorecardPass, `${g} AND ${w}`),
    ...freeCases('trace.processed without FINAL: model_scorecard pass 7 d', scorecardPass, `${g} AND ${w7}`),
    // Where each remaining view's time goes (issue 17, round 3): the statements a view sends at once
    // ("before", concurrent as the view sends them), each alone, and each without one of its parts.
    // Labels starting with ~ answer something else: timed only.
    'split general hours=720': {
      before: [general(`${gen} FINAL`, finalWhere), storedCost(`${traces} FINAL`)].join('\n;;\n'),
      '~generations statement alone': general(`${gen} FINAL`, finalWhere),
      '~  without FINAL': general(gen, finalWhere),
      '~  without quantiles': general(`${gen} FINAL`, finalWhere, '[0]'),
      '~  only GROUP BY date (no model/total sets)': general(`${gen} FINAL`, finalWhere).replace('GROUPING SETS ((date), (model), ())', 'date, model'),
      '~  scan only (count per week)': `SELECT toStartOfWeek(timestamp, 0) AS d, count() FROM ${gen} FINAL ${finalWhere} GROUP BY d`,
      '~  scan only without FINAL': `SELECT toStartOfWeek(timestamp, 0) AS d, count() FROM ${gen} ${finalWhere} GROUP BY d`,
      '~  no cross-partition FINAL merge': general(`${gen} FINAL`, finalWhere) + noMerge,
      '~cost stored pass alone (trace.processed FINAL)': storedCost(`${traces} FINAL`),
      '~  cost stored pass without FINAL': storedCost(traces),
    },
    'split tool_aggregates 30 d': {
      before: toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()),
      '~without FINAL': toolAgg(tools, finalWhere, uuidTraces()),
      '~without distinct traces': toolAgg(`${tools} FINAL`, finalWhere, '0'),
      '~without quantiles': toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()).replace('quantilesExact(0.5, 0.95)(duration_ms)', '[0]'),
      '~without sumMap buckets': toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()).replace(/sumMap\(.*\) AS by_date/, '0 AS by_date'),
      '~scan only (count per tool)': `SELECT tool, count() FROM ${tools} FINAL ${finalWhere} GROUP BY tool`,
      '~scan only without FINAL': `SELECT tool, count() FROM ${tools} ${finalWhere} GROUP BY tool`,
      'no cross-partition FINAL merge': toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()) + noMerge,
    },
    'split model_scorecard 30 d': {
      before: [scoreGen(`${gen} FINAL`, finalWhere), scoreTraces(`${traces} FINAL`, finalWhere), storedCost(`${traces} FINAL`), modelCosts(`${traces} FINAL`)].join('\n;;\n'),
      '~generations statement alone': scoreGen(`${gen} FINAL`, finalWhere),
      '~  without FINAL': scoreGen(gen, finalWhere),
      '~  no cross-partition FINAL merge': scoreGen(`${gen} FINAL`, finalWhere) + noMerge,
      '~trace.processed statements (3, concurrent)': [scoreTraces(`${traces} FINAL`, finalWhere), storedCost(`${traces} FINAL`), modelCosts(`${traces} FINAL`)].join('\n;;\n'),
      '~  trace.processed statements without FINAL': [scoreTraces(traces, finalWhere), storedCost(traces), modelCosts(traces)].join('\n;;\n'),
      '~all four without FINAL on trace.processed': [scoreGen(`${gen} FINAL`, finalWhere), scoreTraces(traces, finalWhere), storedCost(traces), modelCosts(traces)].join('\n;;\n'),
    },
    // Candidate rewrites of the remaining aggregations (issue 17, round 3).
    // The least an exact answer has to do (issue 17): the percentile sets and distinct counts alone,
    // without FINAL, the other aggregates or the cost statements — a floor for the view's statement.
    // Where model_scorecard's trace.processed pass spends (issue 17, session 7): 1 M runs, merged.
    'split model_scorecard pass 30 d': {
      before: scorecardPass(`${traces} FINAL`, finalWhere),
      '~without runs_by_model (sumMap over models)': scorecardPass(`${traces} FINAL`, finalWhere).replace(/sumMap\(models, [^\n]*\) AS runs_by_model/, '0 AS runs_by_model'),
      '~without stored_model_costs (sumMapIf over the cost map)': scorecardPass(`${traces} FINAL`, finalWhere).replace(/,\n  sumMapIf\([^\n]*\) AS stored_model_costs/, ''),
      '~without stored_unpriced_models': scorecardPass(`${traces} FINAL`, finalWhere).replace(/  groupUniqArrayArrayIf[^\n]*\n/, ''),
      '~count only': `SELECT count() FROM ${traces} FINAL ${finalWhere}`,
      '~runs by model as arrayJoin + GROUP BY': `SELECT model, count() FROM (SELECT arrayJoin(models) AS model FROM ${traces} FINAL ${finalWhere}) GROUP BY model`,
    },
    'model_scorecard pass 30 d: map sums': {
      before: scorecardPass(`${traces} FINAL`, finalWhere),
      '~runs: keys as String': scorecardPass(`${traces} FINAL`, finalWhere).replace('sumMap(models, arrayWithConstant(length(models), toUInt64(1)))', 'sumMap(CAST(models, \'Array(String)\'), arrayWithConstant(length(models), toUInt64(1)))'),
      '~costs: sumMapIf(map) + model set': scorecardPass(`${traces} FINAL`, finalWhere).replace(/sumMapIf\([^\n]*\) AS stored_model_costs/, `sumMapIf(cost_model_costs, ${priced}) AS stored_model_costs, groupUniqArrayArrayIf(mapKeys(cost_model_costs), ${priced}) AS cost_models`),
      '~costs: sumMapIf(keys, values) + model set': scorecardPass(`${traces} FINAL`, finalWhere).replace(/sumMapIf\([^\n]*\) AS stored_model_costs/, `sumMapIf(mapKeys(cost_model_costs), mapValues(cost_model_costs), ${priced}) AS stored_model_costs, groupUniqArrayArrayIf(mapKeys(cost_model_costs), ${priced}) AS cost_models`),
      '~costs: String keys, counts kept': scorecardPass(`${traces} FINAL`, finalWhere).replace('sumMapIf(mapKeys(cost_model_costs)', 'sumMapIf(CAST(mapKeys(cost_model_costs), \'Array(String)\')'),
      '~runs as a map too (mapFromArrays)': scorecardPass(`${traces} FINAL`, finalWhere).replace('sumMap(models, arrayWithConstant(length(models), toUInt64(1)))', 'sumMap(mapFromArrays(models, arrayWithConstant(length(models), toUInt64(1))))').replace(/sumMapIf\([^\n]*\) AS stored_model_costs/, `sumMapIf(cost_model_costs, ${priced}) AS stored_model_costs, groupUniqArrayArrayIf(mapKeys(cost_model_costs), ${priced}) AS cost_models`),
      '~both String keys': scorecardPass(`${traces} FINAL`, finalWhere).replace('sumMapIf(mapKeys(cost_model_costs)', 'sumMapIf(CAST(mapKeys(cost_model_costs), \'Array(String)\')').replace('sumMap(models, arrayWithConstant(length(models), toUInt64(1)))', 'sumMap(CAST(models, \'Array(String)\'), arrayWithConstant(length(models), toUInt64(1)))'),
    },
    'floors general hours=720': {
      before: general(`${gen} FINAL`, finalWhere),
      '~read the columns only, no FINAL': `SELECT count(), sum(error), sum(input_tokens), sum(output_tokens), sum(tps) FROM ${gen} ${finalWhere}`,
      '~one percentile set over every value, no FINAL': `SELECT quantilesExact(0.5, 0.95, 0.99)(tps) FROM ${gen} ${finalWhere}`,
      '~the three percentile sets alone, no FINAL': `SELECT toStartOfWeek(timestamp, 0) AS date, model, quantilesExact(0.5, 0.95, 0.99)(tps) FROM ${gen} ${finalWhere} GROUP BY GROUPING SETS ((date), (model), ())`,
      '~the statement without FINAL': general(gen, finalWhere),
    },
    'floors tool_aggregates 30 d': {
      before: toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()),
      '~exact distinct traces per tool alone, no FINAL': `SELECT tool, uniqExact(trace_id) FROM ${tools} ${finalWhere} GROUP BY tool`,
      '~percentiles per tool alone, no FINAL': `SELECT tool, quantilesExact(0.5, 0.95)(duration_ms) FROM ${tools} ${finalWhere} GROUP BY tool`,
      '~the statement without FINAL': toolAgg(tools, finalWhere, uuidTraces()),
    },
    // The pass as the view sends it since session 7 (maps), with and without FINAL: what FINAL's merge of
    // trace.processed parts costs it (a trace can change month partition, so FINAL merges across them).
    'model_scorecard pass 30 d: what FINAL costs': (() => {
      const mapPass = (from: string) => scorecardPass(from, finalWhere).replace('sumMap(models, arrayWithConstant(length(models), toUInt64(1)))', 'sumMap(mapFromArrays(models, arrayWithConstant(length(models), toUInt64(1))))').replace(/sumMapIf\([^\n]*\) AS stored_model_costs/, `sumMapIf(cost_model_costs, ${priced}) AS stored_model_costs, groupUniqArrayArrayIf(mapKeys(cost_model_costs), ${priced}) AS cost_models`);
      return {
        before: mapPass(`${traces} FINAL`),
        '~within partitions (exact only with one partition)': `${mapPass(`${traces} FINAL`)}${noMerge}`,
        '~no FINAL (not exact)': mapPass(traces),
      };
    })(),
    'floors model_scorecard 30 d': {
      before: scoreGen(`${gen} FINAL`, finalWhere),
      '~sums by model alone, no FINAL': `SELECT model, sum(input_tokens), sum(output_tokens), avg(tps) FROM ${gen} ${finalWhere} GROUP BY model`,
      '~the generation statement without FINAL': scoreGen(gen, finalWhere),
    },
    'general hours=720: the (model) set only counts': {
      before: general(`${gen} FINAL`, finalWhere),
      '~(date), () sets + model counts in a second statement': [
        general(`${gen} FINAL`, finalWhere).replace('GROUPING SETS ((date), (model), ())', 'GROUPING SETS ((date), ())').replace(', model, grouping', ', grouping').replace('grouping(model) = 0 AS by_model,', ''),
        `SELECT model, count() AS requests FROM ${gen} FINAL ${finalWhere} GROUP BY model`,
      ].join('\n;;\n'),
      '~per-date states, total merged from them + model counts': [
        `SELECT date, grouping(date) = 0 AS by_date, sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known,
  quantilesExactMerge(0.5, 0.95, 0.99)(q) AS speed_q, sum(i) AS prompt_tokens, sum(o) AS completion_tokens
FROM (SELECT toStartOfWeek(timestamp, 0) AS date, count() AS c, sum(error) AS e, avgState(tps) AS a, count(tps) AS k,
  quantilesExactState(0.5, 0.95, 0.99)(tps) AS q, sum(input_tokens) AS i, sum(output_tokens) AS o
  FROM ${gen} FINAL ${finalWhere} GROUP BY date)
GROUP BY GROUPING SETS ((date), ())`,
        `SELECT model, count() AS requests FROM ${gen} FINAL ${finalWhere} GROUP BY model`,
      ].join('\n;;\n'),
    },
    'tool_aggregates 30 d: per-bucket counts': {
      before: toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()),
      '~countResample/sumResample over a day index': toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()).replace(
        /sumMap\(.*\) AS by_date/,
        `countResample(0, ${days}, 1)(toRelativeDayNum(timestamp) - toRelativeDayNum(toDateTime64('${start}', 3, 'UTC'))) AS calls_by_day,
  sumResample(0, ${days}, 1)(error, toRelativeDayNum(timestamp) - toRelativeDayNum(toDateTime64('${start}', 3, 'UTC'))) AS errors_by_day`,
      ),
      '~(tool), (tool, date) grouping sets': `SELECT tool, toDate(timestamp) AS d, grouping(d) = 0 AS by_date, count() AS calls, sum(error) AS errors,
  if(grouping(d) = 0, [0, 0], quantilesExact(0.5, 0.95)(duration_ms)) AS duration_q, if(grouping(d) = 0, 0, ${uuidTraces()}) AS traces, sum(output_tokens) AS output_tokens
FROM ${tools} FINAL ${finalWhere} GROUP BY GROUPING SETS ((tool), (tool, d))`,
    },
    'model_scorecard 30 d generations: unnamed traces only when an unnamed row exists': {
      before: scoreGen(`${gen} FINAL`, finalWhere),
      '~without unnamed_traces': scoreGen(`${gen} FINAL`, finalWhere, '0'),
      '~the second statement alone (model = \'\')': `SELECT uniqExact(trace_id) AS unnamed_traces FROM ${gen} FINAL ${finalWhere} AND model = ''`,
    },
    // FINAL over trace.processed parts that all overlap (as settle rounds write them): the merge is
    // the whole cost, so how many threads it gets is measured here.
    'trace.processed FINAL threads (cost stored pass)': {
      before: storedCost(`${traces} FINAL`),
      'max_final_threads = 1': `${storedCost(`${traces} FINAL`)} SETTINGS max_final_threads = 1`,
      'enable_vertical_final = 0': `${storedCost(`${traces} FINAL`)} SETTINGS enable_vertical_final = 0`,
    },
    'DSL models by model, 30 d': {
      before: models(`${gen} FINAL`, finalWhere),
      'PREWHERE guard+window': models(`${gen} FINAL`, prewhere),
      'max_threads=2': `${models(`${gen} FINAL`, finalWhere)} SETTINGS max_threads = 2`,
      'max_threads=1': `${models(`${gen} FINAL`, finalWhere)} SETTINGS max_threads = 1`,
      'no FINAL (what FINAL costs)': models(gen, finalWhere),
    },
    'DSL generations per day with errors, 30 d': {
      before: daily(`${gen} FINAL`, finalWhere),
      'PREWHERE guard+window': daily(`${gen} FINAL`, prewhere),
      'max_threads=2': `${daily(`${gen} FINAL`, finalWhere)} SETTINGS max_threads = 2`,
      'optimize_aggregation_in_order': `${daily(`${gen} FINAL`, finalWhere)} SETTINGS optimize_aggregation_in_order = 1`,
      'no FINAL (what FINAL costs)': daily(gen, finalWhere),
    },
    'DSL traces per model (uniqExact trace_id)': {
      before: `SELECT model AS g0, count() AS m0, uniqExact(trace_id) AS m1 FROM ${gen} FINAL ${finalWhere} GROUP BY g0 ORDER BY g0 LIMIT 50`,
      'UUID distinct': `SELECT model AS g0, count() AS m0, ${uuidTraces()} AS m1 FROM ${gen} FINAL ${finalWhere} GROUP BY g0 ORDER BY g0 LIMIT 50`,
    },
    'DSL hourly p50/p99 (two quantileExact vs quantilesExact)': {
      before: `SELECT formatDateTime(toStartOfHour(timestamp), '%Y-%m-%d %H:%i:%S') AS g0, model AS g1, quantileExactOrNull(0.5)(duration_ms) AS m0, quantileExactOrNull(0.99)(duration_ms) AS m1
FROM ${gen} FINAL ${finalWhere} AND model IN ('gpt-4o', 'gpt-4o-mini', 'in-house-model') GROUP BY g0, g1 ORDER BY g0, g1 LIMIT 10000`,
      quantilesExact: `SELECT g0, g1, q[1] AS m0, q[2] AS m1 FROM (SELECT formatDateTime(toStartOfHour(timestamp), '%Y-%m-%d %H:%i:%S') AS g0, model AS g1, quantilesExactOrNull(0.5, 0.99)(duration_ms) AS q
FROM ${gen} FINAL ${finalWhere} AND model IN ('gpt-4o', 'gpt-4o-mini', 'in-house-model') GROUP BY g0, g1) ORDER BY g0, g1 LIMIT 10000`,
    },
    'view general hours=720': {
      before: general(`${gen} FINAL`, finalWhere),
      'no quantiles (what they cost)': general(`${gen} FINAL`, finalWhere, '[0]'),
      'no FINAL (what FINAL costs)': general(gen, finalWhere),
      'two levels: (date, model) states, then sets': `SELECT date, model, grouping(date) = 0 AS by_date, grouping(model) = 0 AS by_model,
  sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known, quantilesExactMerge(0.5, 0.95, 0.99)(q) AS speed_q,
  sum(i) AS prompt_tokens, sum(o) AS completion_tokens
FROM (SELECT toStartOfHour(timestamp) AS date, model, count() AS c, sum(error) AS e, avgState(tps) AS a, count(tps) AS k,
  quantilesExactState(0.5, 0.95, 0.99)(tps) AS q, sum(input_tokens) AS i, sum(output_tokens) AS o
  FROM ${gen} FINAL ${finalWhere} GROUP BY date, model)
GROUP BY GROUPING SETS ((date), (model), ())`,
      '~by date, models as sumMap, total merged': `SELECT date, grouping(date) = 0 AS by_date, sum(c) AS requests, sum(e) AS errors, avgMerge(a) AS speed, sum(k) AS speed_known,
  quantilesExactMerge(0.5, 0.95, 0.99)(q) AS speed_q, sum(i) AS prompt_tokens, sum(o) AS completion_tokens, sumMap(m) AS models
FROM (SELECT toStartOfHour(timestamp) AS date, count() AS c, sum(error) AS e, avgState(tps) AS a, count(tps) AS k,
  quantilesExactState(0.5, 0.95, 0.99)(tps) AS q, sum(input_tokens) AS i, sum(output_tokens) AS o, sumMap(map(model, toUInt64(1))) AS m
  FROM ${gen} FINAL ${finalWhere} GROUP BY date)
GROUP BY GROUPING SETS ((date), ())`,
      'PREWHERE guard+window': general(`${gen} FINAL`, prewhere),
      'max_threads=2': `${general(`${gen} FINAL`, finalWhere)} SETTINGS max_threads = 2`,
    },
    'view tool_aggregates 30 d': {
      before: toolAgg(`${tools} FINAL`, finalWhere),
      'UUID distinct': toolAgg(`${tools} FINAL`, finalWhere, uuidTraces()),
      'UUID distinct + PREWHERE': toolAgg(`${tools} FINAL`, prewhere, uuidTraces()),
      'PREWHERE guard+window': toolAgg(`${tools} FINAL`, prewhere),
    },
    'view model_scorecard 30 d: generations': {
      before: scoreGen(`${gen} FINAL`, finalWhere),
      'PREWHERE guard+window': scoreGen(`${gen} FINAL`, prewhere),
      'without unnamed_traces (what it costs)': scoreGen(`${gen} FINAL`, finalWhere, '0'),
      'without groupUniqArray(provider) (what it costs)': scoreGen(`${gen} FINAL`, finalWhere).replace('arraySort(groupUniqArray(provider))', '[]'),
      '~unnamed_traces in its own statement': [scoreGen(`${gen} FINAL`, finalWhere, '0'), `SELECT uniqExact(trace_id) AS unnamed_traces FROM ${gen} FINAL ${finalWhere} AND model = ''`].join('\n;;\n'),
    },
    // The statements model_scorecard sends to trace.processed (runs per model, the cost module's
    // stored columns, stored dollars per model) against one scan answering all three. Labels
    // starting with ~ answer in another shape: timed, not compared (the view's tests check them).
    'view model_scorecard 30 d: trace.processed statements': {
      before: [
        scoreTraces(`${traces} FINAL`, finalWhere),
        `SELECT count() AS traces, countIf(${written}) AS stored_traces, countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), ${priced}) AS stored_cost, sumIf(cost_priced_tokens, ${written}) AS stored_priced_tokens, sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, ${written}) AS stored_priced_at, groupUniqArrayArrayIf(51)(cost_unpriced_models, ${written}) AS stored_unpriced_models
FROM ${traces} FINAL ${finalWhere}`,
        `SELECT tupleElement(kv, 1) AS model, sum(tupleElement(kv, 2)) AS cost FROM (SELECT arrayJoin(arrayZip(mapKeys(cost_model_costs), mapValues(cost_model_costs))) AS kv
  FROM ${traces} FINAL ${finalWhere} AND ${priced}) GROUP BY model`,
      ].join('\n;;\n'),
      '~one scan': `SELECT count() AS traces, countIf(${written}) AS stored_traces, countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), ${priced}) AS stored_cost, sumIf(cost_priced_tokens, ${written}) AS stored_priced_tokens, sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, ${written}) AS stored_priced_at, groupUniqArrayArrayIf(51)(cost_unpriced_models, ${written}) AS stored_unpriced_models,
  sumMap(models, arrayWithConstant(length(models), toUInt64(1))) AS runs_by_model, sumMapIf(cost_model_costs, ${priced}) AS cost_by_model
FROM ${traces} FINAL ${finalWhere}`,
    },
    'view model_scorecard 30 d: runs per model (trace.processed)': {
      before: scoreTraces(`${traces} FINAL`, finalWhere),
      // Exact only if no run's timestamp differs between its versions (a late root can move it): checked, see README.
      'PREWHERE window (not exact in general)': scoreTraces(`${traces} FINAL`, prewhere),
    },
  };
}

async function main() {
  if (!DATA_DIR) throw new Error('--data-dir DIR (seeded by views.ts --data-dir DIR) is required');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.resolve(DATA_DIR), LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'silent', QUERY_TIMEOUT_SECONDS: '60' });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const ch = service.deps.ch;
    const run = async (statements: string): Promise<string[]> => {
      const list = statements.split('\n;;\n');
      if (list.length > 1) return (await Promise.all(list.map((one) => run(one)))).flat();
      const query = list[0];
      const r = await ch.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } });
      // Float sums in a different order differ in the last bits (and do so between runs of the same
      // statement): compared at 12 significant digits.
      const round = (_: string, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v);
      return (await r.json<Record<string, unknown>>()).map((row) => JSON.stringify(row, round)).sort();
    };
    const [scope] = (await run(`SELECT tenant_id, project_id, toString(min(timestamp) - INTERVAL 1 DAY) AS s, toString(max(timestamp) + INTERVAL 1 DAY) AS e FROM ${ch.table('event_generation_completed')} GROUP BY tenant_id, project_id`)).map((r) => JSON.parse(r));
    const all = cases(ch.database, scope.tenant_id, scope.project_id, scope.s, scope.e);
    // A fixed part layout for the whole run: background merges would otherwise turn "as inserted"
    // into "merged" half-way through (and take CPU from the statements timed).
    for (const t of ['event_generation_completed', 'event_tool_called', 'event_trace_processed']) await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table(t)}` });
    const parts = await run(`SELECT table, count() AS parts, sum(rows) AS rows FROM system.parts WHERE database = '${ch.database}' AND active AND table LIKE 'event_%' GROUP BY table`);
    console.log(`parts: ${parts.join(' ')}\nload before: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    for (const [name, variants] of Object.entries(all)) {
      if (ONLY && !name.includes(ONLY)) continue;
      const expected = await run(variants.before);
      const ok: Record<string, string> = {};
      for (const [label, query] of Object.entries(variants)) {
        const got = await run(query);
        if (label.startsWith('~')) ok[label] = 'other shape';
        else ok[label] = JSON.stringify(got) === JSON.stringify(expected) ? 'same' : `WRONG (${got.length} rows vs ${expected.length})`;
      }
      const times = new Map(Object.keys(variants).map((label) => [label, [] as number[]]));
      // Interleaved: every round runs every variant once, so each sees the same machine state.
      for (let i = 0; i < RUNS; i++) {
        for (const [label, query] of Object.entries(variants)) {
          const s = performance.now();
          await run(query);
          times.get(label)!.push(performance.now() - s);
        }
      }
      console.log(`\n${name}  (${expected.length} rows; load ${os.loadavg()[0].toFixed(1)})`);
      for (const [label, list] of times) {
        list.sort((a, b) => a - b);
        console.log(`  ${label.padEnd(44)} p50 ${percentile(list, 0.5).toFixed(0).padStart(6)}  p95 ${percentile(list, 0.95).toFixed(0).padStart(6)}  ${ok[label]}`);
      }
    }
    console.log(`\nload after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await service.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
