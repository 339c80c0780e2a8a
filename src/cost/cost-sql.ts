import { fromText, join, param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { processedTraces } from '../platform/clickhouse/sql/processed-traces.js';
import { scopedTable, tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { PRICED_BASES, WRITTEN_BASES } from './stored-cost.js';

/**
 * The SQL of query-time cost (docs/cost.md "How a figure is computed"). Every statement reads a
 * selection of `trace.processed` rows given as {table, where, groups}: `where` and the group
 * expressions are fragments over that table's columns (the analytics compiler's output, or the
 * views' own guard) that carry their own values; this module adds its own values the same way, so
 * the SQL layer names them all and nothing here can collide or splice a caller string.
 *
 * Tables are read with FINAL: re-processed traces and re-sent spans count once;
 * trace.processed through the SQL layer's processedTraces, the one read of that table.
 *
 * On a cluster the tables are Distributed, which refuse an IN or JOIN whose subquery reads a
 * Distributed table again (ClickHouse code 288): the live-trace set is therefore joined GLOBAL, built
 * once on the initiator and shipped to every shard. It is capped (`cost_live_cap`), so the shipped
 * set stays small; on one node GLOBAL means plain IN / JOIN.
 */
export type SqlFragment = Fragment;

export interface TraceSelection {
  /** Qualified trace.processed table. */
  table: string;
  where: Fragment;
  groups: { alias: string; sql: Fragment }[];
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');
/** Bases decided at write time (constants from code, not caller input). */
export const WRITTEN = `estimated_cost_basis IN (${list(WRITTEN_BASES)})`;
const PRICED = `estimated_cost_basis IN (${list(PRICED_BASES)})`;
const UNWRITTEN = `estimated_cost_basis NOT IN (${list(WRITTEN_BASES)})`;
const UNPRICED_STORED = `estimated_cost_basis IN ('partial', 'unpriced')`;

const GROUP_NAME = /^cg_\d+$/;

export function groupColumns(groups: TraceSelection['groups'], prefix = ''): { select: Fragment | null; by: string; names: string[] } {
  const names = groups.map((_, i) => `cg_${i}`);
  if (prefix && !/^[a-z]$/.test(prefix)) throw new Error('a group prefix is one table alias letter');
  const items = groups.map((g, i) => sql`${prefix ? raw(`${prefix}.${names[i]}`) : g.sql} AS ${raw(names[i])}`);
  if (!names.every((n) => GROUP_NAME.test(n))) throw new Error('unexpected group name');
  return { select: items.length > 0 ? join(items) : null, by: names.join(', '), names };
}

/** `<select>, ` before a following list, or nothing. */
const lead = (select: Fragment | null) => (select ? sql`${select}, ` : raw(''));

/**
 * The stored-cost aggregates of storedSql, less its `count() AS traces`, so a view whose own
 * statement reads the same trace.processed rows (same guard, same window, same groups) can compute
 * them in its pass and hand the rows to the cost module (cost-object.ts `storedRows`) instead of
 * the module scanning the rows a second time.
 */
export function storedColumns(unpricedCap: number): Fragment {
  // One more name than listed, so the engine sees whether the list overflowed.
  return fromText(
    `countIf(${WRITTEN}) AS stored_traces,
  countIf(${UNPRICED_STORED}) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), ${PRICED}) AS stored_cost,
  sumIf(cost_priced_tokens, ${WRITTEN}) AS stored_priced_tokens,
  sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, ${WRITTEN}) AS stored_priced_at,
  groupUniqArrayArrayIf({cap:UInt32})(cost_unpriced_models, ${WRITTEN}) AS stored_unpriced_models`,
    { cap: unpricedCap + 1 },
  );
}

/** Per group: trace counts by basis, the stored dollars and tokens, the stored unpriced names. */
export function storedSql(sel: TraceSelection, unpricedCap: number): Fragment {
  const g = groupColumns(sel.groups);
  return sql`SELECT ${lead(g.select)}
  count() AS traces,
  ${storedColumns(unpricedCap)}
FROM ${processedTraces(sel.table, sel.where)}${raw(g.by ? `\nGROUP BY ${g.by}` : '')}`;
}

/**
 * Per model, the dollars stored on the selected trace rows priced at write time
 * (`cost_model_costs`, written with the trace's total by stored-cost.ts), so a per-model breakdown
 * also covers traces that were never priced at query time.
 */
export function storedModelCostsSql(sel: TraceSelection): Fragment {
  return sql`SELECT tupleElement(kv, 1) AS model, sum(tupleElement(kv, 2)) AS cost
FROM (
  SELECT arrayJoin(arrayZip(mapKeys(cost_model_costs), mapValues(cost_model_costs))) AS kv
  FROM ${processedTraces(sel.table, sel.where)}
  WHERE ${raw(PRICED)}
)
GROUP BY model`;
}

/**
 * storedModelCostsSql's answer as columns of a caller's own scan of the same rows (the model_scorecard
 * view), over the rows priced at write time: `stored_model_costs`, the dollars summed per model (the
 * map summed as a map), and `stored_cost_models`, every model those rows name. A model whose dollars
 * sum to 0 must stay listed (at 0), as arrayJoin + GROUP BY keeps it: sumMap over key and value arrays
 * drops such a key; over a Map chdb 26.x keeps it, but the set does not depend on which form or server
 * version answers (~8 ms over 1 M runs). The map is summed as a map because that is markedly
 * cheaper than summing key and value arrays with a row count beside them.
 */
export function storedModelCostsColumn(): Fragment {
  return raw(`sumMapIf(cost_model_costs, ${PRICED}) AS stored_model_costs,
  groupUniqArrayArrayIf(mapKeys(cost_model_costs), ${PRICED}) AS stored_cost_models`);
}

/** The {model, cost} rows of the storedModelCostsColumn columns (as storedModelCostsSql answers them), by model name. */
export function storedModelCostsOf(row: Record<string, unknown>): { model: string; cost: number }[] {
  const sums = (row.stored_model_costs ?? {}) as Record<string, number | string>;
  const models = [...((row.stored_cost_models ?? []) as string[])].sort();
  return models.map((model) => ({ model, cost: Number(sums[model] ?? 0) }));
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

function genGuard(gen: GenerationScope, alias?: string): Fragment {
  const p = alias ? `${alias}.` : '';
  const time = sql`${raw(`${p}timestamp >= `)}${param("DateTime64(3, 'UTC')", gen.from)}${raw(` AND ${p}timestamp < `)}${param("DateTime64(3, 'UTC')", gen.to)}`;
  return sql`${tenantGuard(gen, alias)} AND ${time}`;
}

/** trace.processed's text trace id as a UUID, exact for canonical text (event-ids.ts). */
const TRACE_UUID = `if(toString(toUUIDOrZero(trace_id)) = trace_id, toUUIDOrZero(trace_id), toUUIDOrZero(''))`;

/**
 * The traces priced at query time: selected rows whose cost was not decided at write time, at
 * most `liveCap` of them (oldest first, so repeated answers agree).
 */
function liveCte(sel: TraceSelection, liveCap: number): Fragment {
  const g = groupColumns(sel.groups);
  // trace_uuid: the trace id as generation.completed stores it (a UUID, migration 009), converted
  // once per live trace instead of per generation row; a text that is no UUID's (none that
  // ingestion writes) becomes the nil UUID, which no generation row has (ids are v5 UUIDs).
  return sql`WITH live AS (
  SELECT trace_id, ${raw(TRACE_UUID)} AS trace_uuid, total_tokens AS live_tokens${g.select ? sql`, ${g.select}` : raw('')}
  FROM ${processedTraces(sel.table, sel.where)}
  WHERE ${raw(UNWRITTEN)}
  ORDER BY timestamp, trace_id
  LIMIT ${param('UInt64', liveCap)}
)`;
}

/** Per group: live traces within the cap, and those with tokens but no generation row to price. */
export function liveCountSql(sel: TraceSelection, gen: GenerationScope, liveCap: number): Fragment {
  const g = groupColumns(sel.groups);
  return sql`${liveCte(sel, liveCap)}
SELECT ${raw(g.by ? `${g.by}, ` : '')}count() AS in_cap,
  countIf(live_tokens > 0 AND trace_uuid NOT IN (
    SELECT trace_id FROM ${scopedTable(gen.table)} WHERE ${genGuard(gen)} AND trace_id GLOBAL IN (SELECT trace_uuid FROM live)
  )) AS without_generations
FROM live${raw(g.by ? `\nGROUP BY ${g.by}` : '')}`;
}

/**
 * Input tokens including cache reads and writes, per generation row: the same rule as price-calc.ts
 * normalizeUsage (cache parts larger than the reported prompt were reported outside it, Anthropic
 * style), so a summed bucket prices each call as stored cost prices it alone.
 */
const IN_TOTAL = (p: string) =>
  `if(${p}cached_input_tokens + ${p}cache_write_input_tokens > ${p}input_tokens, ${p}input_tokens + ${p}cached_input_tokens + ${p}cache_write_input_tokens, ${p}input_tokens)`;

/** Distinct (model, provider) of the live traces' generations, largest token volume first. */
export function liveModelsSql(sel: TraceSelection, gen: GenerationScope, liveCap: number): Fragment {
  return sql`${liveCte(sel, liveCap)}
SELECT model, provider, sum(input_tokens + output_tokens) AS tokens, sum(cached_input_tokens) AS cached,
  sum(cache_write_input_tokens) AS cache_write
FROM ${scopedTable(gen.table)} FINAL
WHERE ${genGuard(gen)} AND trace_id GLOBAL IN (SELECT trace_uuid FROM live)
GROUP BY model, provider
ORDER BY tokens DESC, model, provider`;
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

function bucketColumns(spec: BucketSpec, p: string): Fragment {
  return fromText(
    `arrayFirstIndex((bp, bm) -> bp = ${p}provider AND bm = ${p}model, {providers:Array(String)}, {models:Array(String)}) AS bucket_index,
  arrayCount(b -> ${IN_TOTAL(p)} > b, {breaks:Array(Array(UInt64))}[bucket_index]) AS tier,
  multiIf({gran:Array(UInt8)}[bucket_index] = 2, toUnixTimestamp(toStartOfMinute(${p}timestamp)),
          {gran:Array(UInt8)}[bucket_index] = 1, toUnixTimestamp(toStartOfDay(${p}timestamp)), 0) AS at_s`,
    { providers: spec.providers, models: spec.models, breaks: spec.breaks, gran: spec.granularity },
  );
}

const SUMS = (p: string) => `sum(${IN_TOTAL(p)}) AS input, sum(${p}cached_input_tokens) AS cached,
  sum(${p}cache_write_input_tokens) AS cache_write, sum(${p}output_tokens) AS output,
  sum(${p}input_tokens + ${p}output_tokens) AS tokens, count() AS calls`;

/** The live traces' generations summed per group × model × provider × tier bucket × price time. */
export function liveRollupSql(sel: TraceSelection, gen: GenerationScope, liveCap: number, spec: BucketSpec): Fragment {
  const g = groupColumns(sel.groups, 'l');
  return sql`${liveCte(sel, liveCap)}
SELECT ${lead(g.select)}g.model AS model, g.provider AS provider,
  ${bucketColumns(spec, 'g.')},
  ${raw(SUMS('g.'))}
FROM ${scopedTable(gen.table)} AS g FINAL GLOBAL INNER JOIN live AS l ON g.trace_id = l.trace_uuid
WHERE ${genGuard(gen, 'g')}
GROUP BY ${raw(g.by ? `${g.by}, ` : '')}model, provider, bucket_index, tier, at_s`;
}

/** generation_cost: distinct (model, provider) of the selected generation rows. */
export function generationModelsSql(table: string, where: Fragment): Fragment {
  return sql`SELECT model, provider FROM ${scopedTable(table)} FINAL WHERE ${where} GROUP BY model, provider`;
}

/** generation_cost: the selected generation rows summed per group × provider × tier bucket × price time. */
export function generationRollupSql(table: string, where: Fragment, groups: TraceSelection['groups'], spec: BucketSpec): Fragment {
  const g = groupColumns(groups);
  return sql`SELECT ${lead(g.select)}model AS cost_model, provider AS cost_provider,
  ${bucketColumns(spec, '')},
  ${raw(SUMS(''))}
FROM ${scopedTable(table)} FINAL
WHERE ${where}
GROUP BY ${raw(g.by ? `${g.by}, ` : '')}cost_model, cost_provider, bucket_index, tier, at_s`;
}
