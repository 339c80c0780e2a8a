import { PRICED_BASES, WRITTEN_BASES } from './stored-cost.js';

/**
 * The SQL of query-time cost (docs/cost.md "How a figure is computed"). Every statement reads a
 * selection of `trace.processed` rows given as {table, where, groups}: `where` and the group
 * expressions are already-printed SQL over that table's columns with {pN:Type} placeholders (the
 * analytics compiler's output, or the views' own guard), so this module adds only its own bound
 * parameters, all prefixed `cost_`, and never splices a caller string.
 *
 * Tables are read with FINAL: re-processed traces and re-sent spans count once (DESIGN.md "Analytics").
 */
export interface SqlFragment {
  sql: string;
  params: Record<string, unknown>;
}

export interface TraceSelection {
  /** Qualified trace.processed table. */
  table: string;
  where: SqlFragment;
  groups: { alias: string; sql: string }[];
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');
/** Bases decided at write time (constants from code, not caller input). */
export const WRITTEN = `estimated_cost_basis IN (${list(WRITTEN_BASES)})`;
const PRICED = `estimated_cost_basis IN (${list(PRICED_BASES)})`;
const UNWRITTEN = `estimated_cost_basis NOT IN (${list(WRITTEN_BASES)})`;
const UNPRICED_STORED = `estimated_cost_basis IN ('partial', 'unpriced')`;

export function groupColumns(groups: TraceSelection['groups'], prefix = ''): { select: string; by: string; names: string[] } {
  const names = groups.map((_, i) => `cg_${i}`);
  return {
    select: groups.map((g, i) => `${prefix ? `${prefix}.${names[i]}` : g.sql} AS ${names[i]}`).join(', '),
    by: names.join(', '),
    names,
  };
}

/**
 * The stored-cost aggregates of storedSql, less its `count() AS traces`, so a view whose own
 * statement reads the same trace.processed rows (same guard, same window, same groups) can compute
 * them in its pass and hand the rows to the cost module (cost-object.ts `storedRows`) instead of
 * the module scanning the rows a second time. Needs the `cost_unpriced_cap` parameter
 * (storedColumnParams).
 */
export const STORED_COLUMNS = `countIf(${WRITTEN}) AS stored_traces,
  countIf(${UNPRICED_STORED}) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), ${PRICED}) AS stored_cost,
  sumIf(cost_priced_tokens, ${WRITTEN}) AS stored_priced_tokens,
  sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, ${WRITTEN}) AS stored_priced_at,
  groupUniqArrayArrayIf({cost_unpriced_cap:UInt32})(cost_unpriced_models, ${WRITTEN}) AS stored_unpriced_models`;

/** One more name than listed, so the engine sees whether the list overflowed. */
export function storedColumnParams(unpricedCap: number): Record<string, unknown> {
  return { cost_unpriced_cap: unpricedCap + 1 };
}

/** Per group: trace counts by basis, the stored dollars and tokens, the stored unpriced names. */
export function storedSql(sel: TraceSelection, unpricedCap: number): SqlFragment {
  const g = groupColumns(sel.groups);
  const sql = `SELECT ${g.select ? `${g.select}, ` : ''}
  count() AS traces,
  ${STORED_COLUMNS}
FROM ${sel.table} FINAL
WHERE ${sel.where.sql}${g.by ? `\nGROUP BY ${g.by}` : ''}`;
  return { sql, params: { ...sel.where.params, ...storedColumnParams(unpricedCap) } };
}

/**
 * Per model, the dollars stored on the selected trace rows priced at write time
 * (`cost_model_costs`, written with the trace's total by stored-cost.ts), so a per-model breakdown
 * also covers traces that were never priced at query time.
 */
export function storedModelCostsSql(sel: TraceSelection): SqlFragment {
  const sql = `SELECT tupleElement(kv, 1) AS model, sum(tupleElement(kv, 2)) AS cost
FROM (
  SELECT arrayJoin(arrayZip(mapKeys(cost_model_costs), mapValues(cost_model_costs))) AS kv
  FROM ${sel.table} FINAL
  WHERE (${sel.where.sql}) AND ${PRICED}
)
GROUP BY model`;
  return { sql, params: sel.where.params };
}

export interface GenerationScope {
  /** Qualified event_generation_completed table. */
  table: string;
  tenantId: string;
  projectId: string;
  /** Generations of the selected traces are looked for in this time range (the window ± a margin). */
  from: Date;
  to: Date;
}

function chTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

function genParams(gen: GenerationScope): Record<string, unknown> {
  return { cost_tenant: gen.tenantId, cost_project: gen.projectId, cost_gen_from: chTime(gen.from), cost_gen_to: chTime(gen.to) };
}

function genGuard(alias = ''): string {
  const p = alias ? `${alias}.` : '';
  return `${p}tenant_id = {cost_tenant:String} AND ${p}project_id = {cost_project:String} AND ${p}timestamp >= {cost_gen_from:DateTime64(3, 'UTC')} AND ${p}timestamp < {cost_gen_to:DateTime64(3, 'UTC')}`;
}

/**
 * The traces priced at query time: selected rows whose cost was not decided at write time, at
 * most `cost_live_cap` of them (oldest first, so repeated answers agree).
 */
function liveCte(sel: TraceSelection): string {
  const g = groupColumns(sel.groups);
  return `WITH live AS (
  SELECT trace_id, total_tokens AS live_tokens${g.select ? `, ${g.select}` : ''}
  FROM ${sel.table} FINAL
  WHERE (${sel.where.sql}) AND ${UNWRITTEN}
  ORDER BY timestamp, trace_id
  LIMIT {cost_live_cap:UInt64}
)`;
}

/** Per group: live traces within the cap, and those with tokens but no generation row to price. */
export function liveCountSql(sel: TraceSelection, gen: GenerationScope, liveCap: number): SqlFragment {
  const g = groupColumns(sel.groups);
  const sql = `${liveCte(sel)}
SELECT ${g.by ? `${g.by}, ` : ''}count() AS in_cap,
  countIf(live_tokens > 0 AND trace_id NOT IN (
    SELECT trace_id FROM ${gen.table} WHERE ${genGuard()} AND trace_id IN (SELECT trace_id FROM live)
  )) AS without_generations
FROM live${g.by ? `\nGROUP BY ${g.by}` : ''}`;
  return { sql, params: { ...sel.where.params, ...genParams(gen), cost_live_cap: liveCap } };
}

/**
 * Input tokens including cache reads and writes, per generation row: the same rule as price-calc.ts
 * normalizeUsage (cache parts larger than the reported prompt were reported outside it, Anthropic
 * style), so a summed bucket prices each call as stored cost prices it alone.
 */
const IN_TOTAL = (p: string) =>
  `if(${p}cached_input_tokens + ${p}cache_write_input_tokens > ${p}input_tokens, ${p}input_tokens + ${p}cached_input_tokens + ${p}cache_write_input_tokens, ${p}input_tokens)`;

/** Distinct (model, provider) of the live traces' generations, largest token volume first. */
export function liveModelsSql(sel: TraceSelection, gen: GenerationScope, liveCap: number): SqlFragment {
  const sql = `${liveCte(sel)}
SELECT model, provider, sum(input_tokens + output_tokens) AS tokens, sum(cached_input_tokens) AS cached,
  sum(cache_write_input_tokens) AS cache_write
FROM ${gen.table} FINAL
WHERE ${genGuard()} AND trace_id IN (SELECT trace_id FROM live)
GROUP BY model, provider
ORDER BY tokens DESC, model, provider`;
  return { sql, params: { ...sel.where.params, ...genParams(gen), cost_live_cap: liveCap } };
}

/**
 * Per-model pricing parameters for the rollup: models with tiered prices or time-dependent price
 * variants are listed (provider, model, tier breaks, time granularity 0 none / 1 day / 2 minute);
 * every other model falls in index 0, one bucket.
 */
export interface BucketSpec {
  providers: string[];
  models: string[];
  breaks: number[][];
  granularity: number[];
}

function bucketColumns(spec: BucketSpec, p: string): string {
  return `arrayFirstIndex((bp, bm) -> bp = ${p}provider AND bm = ${p}model, {cost_bucket_providers:Array(String)}, {cost_bucket_models:Array(String)}) AS bucket_index,
  arrayCount(b -> ${IN_TOTAL(p)} > b, {cost_bucket_breaks:Array(Array(UInt64))}[bucket_index]) AS tier,
  multiIf({cost_bucket_gran:Array(UInt8)}[bucket_index] = 2, toUnixTimestamp(toStartOfMinute(${p}timestamp)),
          {cost_bucket_gran:Array(UInt8)}[bucket_index] = 1, toUnixTimestamp(toStartOfDay(${p}timestamp)), 0) AS at_s`;
}

function bucketParams(spec: BucketSpec): Record<string, unknown> {
  return {
    cost_bucket_providers: spec.providers,
    cost_bucket_models: spec.models,
    cost_bucket_breaks: spec.breaks,
    cost_bucket_gran: spec.granularity,
  };
}

const SUMS = (p: string) => `sum(${IN_TOTAL(p)}) AS input, sum(${p}cached_input_tokens) AS cached,
  sum(${p}cache_write_input_tokens) AS cache_write, sum(${p}output_tokens) AS output,
  sum(${p}input_tokens + ${p}output_tokens) AS tokens, count() AS calls`;

/** The live traces' generations summed per group × model × provider × tier bucket × price time. */
export function liveRollupSql(sel: TraceSelection, gen: GenerationScope, liveCap: number, spec: BucketSpec): SqlFragment {
  const g = groupColumns(sel.groups, 'l');
  const sql = `${liveCte(sel)}
SELECT ${g.select ? `${g.select}, ` : ''}g.model AS model, g.provider AS provider,
  ${bucketColumns(spec, 'g.')},
  ${SUMS('g.')}
FROM ${gen.table} AS g FINAL INNER JOIN live AS l ON g.trace_id = l.trace_id
WHERE ${genGuard('g')}
GROUP BY ${g.by ? `${g.by}, ` : ''}model, provider, bucket_index, tier, at_s`;
  return { sql, params: { ...sel.where.params, ...genParams(gen), ...bucketParams(spec), cost_live_cap: liveCap } };
}

/** generation_cost: distinct (model, provider) of the selected generation rows. */
export function generationModelsSql(table: string, where: SqlFragment): SqlFragment {
  return { sql: `SELECT model, provider FROM ${table} FINAL WHERE ${where.sql} GROUP BY model, provider`, params: where.params };
}

/** generation_cost: the selected generation rows summed per group × provider × tier bucket × price time. */
export function generationRollupSql(table: string, where: SqlFragment, groups: TraceSelection['groups'], spec: BucketSpec): SqlFragment {
  const g = groupColumns(groups);
  const sql = `SELECT ${g.select ? `${g.select}, ` : ''}model AS cost_model, provider AS cost_provider,
  ${bucketColumns(spec, '')},
  ${SUMS('')}
FROM ${table} FINAL
WHERE ${where.sql}
GROUP BY ${g.by ? `${g.by}, ` : ''}cost_model, cost_provider, bucket_index, tier, at_s`;
  return { sql, params: { ...where.params, ...bucketParams(spec) } };
}
