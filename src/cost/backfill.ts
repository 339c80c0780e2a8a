import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { PriceCatalog } from './price-catalog.js';
import { currentCatalog } from './price-book.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { storedIdValue } from '../platform/clickhouse/sql/event-ids.js';
import { traceKeyAfter, type TraceKeyCursor } from '../platform/clickhouse/sql/trace-key-after.js';
import { GENERATION_MARGIN_MS, parseChTime } from './cost-engine.js';
import { WRITTEN } from './cost-sql.js';
import { computeStoredTraceCost, type GenerationForCost } from './stored-cost.js';
import { dateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { rowText } from '../platform/clickhouse/row-text.js';
import type { BackfillResult } from './cost-shapes.js';

/**
 * The cost backfill (`npm run admin -- backfill-costs`, `POST /api/admin/backfill-costs`): prices
 * trace.processed rows written without a catalog (basis `unavailable`, or '' from before cost
 * existed) from their generation rows, with the catalog current at the run.
 *
 * Each priced row is written again with the same key and processed_at one millisecond after the
 * row it replaces (ReplacingMergeTree keeps the newest). So the rewrite wins over the row it
 * read, but a re-processing of the trace that happened meanwhile (a later processed_at) still wins
 * over the rewrite. The rewritten basis is stored / partial / unpriced: nothing prices it again,
 * so it keeps the price as of the backfill run however the catalog changes later. The trace summary row's estimated_cost_usd is brought along the same way.
 */
export interface BackfillOptions {
  tenantId?: string;
  projectId?: string;
  /** Injected catalog; null = no prices; undefined = the process's price book. */
  catalog?: PriceCatalog | null;
  batchSize?: number;
}

export type { BackfillResult };

/** ` AND <guard>` for the tenant (and project) the run is limited to, or nothing for all tenants. */
function scopeFilter(options: BackfillOptions): Fragment {
  if (options.tenantId !== undefined) return sql` AND ${tenantGuard({ tenantId: options.tenantId, projectId: options.projectId })}`;
  if (options.projectId !== undefined) return sql` AND project_id = ${param('String', options.projectId)}`;
  return raw('');
}

/** The backfill is maintenance: the system lane, never gated behind analytics. */
function read(store: ClickHouseStore, statement: Fragment): Promise<Record<string, unknown>[]> {
  return store.read(statement, { lane: 'system' });
}

function shiftTime(value: unknown): string {
  const date = parseChTime(value) ?? new Date();
  return dateTime64(new Date(date.getTime() + 1));
}

async function generationsByTrace(store: ClickHouseStore, tenantId: string, projectId: string, rows: Record<string, unknown>[]): Promise<Map<string, GenerationForCost[]>> {
  const times = rows.map((r) => parseChTime(r.timestamp)?.getTime() ?? Date.now());
  const from = new Date(Math.min(...times) - GENERATION_MARGIN_MS);
  const to = new Date(Math.max(...times) + GENERATION_MARGIN_MS);
  // generation.completed stores trace_id as a UUID (event-ids.ts): a trace id that is no UUID's
  // canonical text has no generation row.
  const ids = rows.flatMap((r) => storedIdValue('uuid', String(r.trace_id))?.value ?? []);
  if (ids.length === 0) return new Map();
  const result = await read(
    store,
    sql`SELECT trace_id, model, provider, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, timestamp
FROM ${raw(store.table('event_generation_completed'))} FINAL
WHERE ${tenantGuard({ tenantId, projectId })} AND trace_id IN ${param('Array(UUID)', ids)}
  AND timestamp >= ${param("DateTime64(3, 'UTC')", from)} AND timestamp < ${param("DateTime64(3, 'UTC')", to)}`,
  );
  const byTrace = new Map<string, GenerationForCost[]>();
  for (const g of result) {
    const list = byTrace.get(String(g.trace_id)) ?? [];
    list.push({
      model: rowText(g.model),
      provider: rowText(g.provider),
      inputTokens: Number(g.input_tokens),
      outputTokens: Number(g.output_tokens),
      cachedInputTokens: Number(g.cached_input_tokens),
      cacheWriteInputTokens: Number(g.cache_write_input_tokens),
      timestamp: parseChTime(g.timestamp) ?? undefined,
    });
    byTrace.set(String(g.trace_id), list);
  }
  return byTrace;
}

async function rewriteSummaries(store: ClickHouseStore, tenantId: string, projectId: string, costs: Map<string, number | null>): Promise<void> {
  const rows = await read(
    store,
    sql`SELECT * FROM ${raw(store.table('traces'))} FINAL WHERE ${tenantGuard({ tenantId, projectId })} AND trace_id IN ${param('Array(String)', [...costs.keys()])}`,
  );
  const values = rows.map((r) => ({ ...r, estimated_cost_usd: costs.get(String(r.trace_id)) ?? null, processed_at: shiftTime(r.processed_at) }));
  await store.insert(store.table('traces'), values, 'system');
}

export async function backfillCosts(store: ClickHouseStore, options: BackfillOptions = {}): Promise<BackfillResult> {
  const catalog = options.catalog === undefined ? await currentCatalog() : options.catalog;
  const table = store.table('event_trace_processed');
  const scope = scopeFilter(options);
  const batchSize = options.batchSize ?? 1000;
  const result: BackfillResult = { scanned: 0, rewritten: 0, priced_at: null, without_generations: 0 };
  if (!catalog) {
    const [row] = await read(store, sql`SELECT count() AS n FROM ${raw(table)} FINAL WHERE NOT (${raw(WRITTEN)})${scope}`);
    return { ...result, scanned: Number(row?.n ?? 0), skipped: 'prices_unavailable' };
  }
  let cursor: TraceKeyCursor = { tenant_id: '', project_id: '', trace_id: '' };
  for (;;) {
    const batch = await read(
      store,
      sql`SELECT * FROM ${raw(table)} FINAL
WHERE NOT (${raw(WRITTEN)})${scope} AND ${traceKeyAfter(cursor)}
ORDER BY tenant_id, project_id, trace_id LIMIT ${param('UInt32', batchSize)}`,
    );
    if (batch.length === 0) break;
    result.scanned += batch.length;
    const last = batch[batch.length - 1];
    cursor = { tenant_id: String(last.tenant_id), project_id: String(last.project_id), trace_id: String(last.trace_id) };

    const byProject = new Map<string, Record<string, unknown>[]>();
    for (const row of batch) {
      const key = JSON.stringify([row.tenant_id, row.project_id]);
      byProject.set(key, [...(byProject.get(key) ?? []), row]);
    }
    for (const [key, rows] of byProject) {
      const [tenantId, projectId] = JSON.parse(key) as [string, string];
      const generations = await generationsByTrace(store, tenantId, projectId, rows);
      const costs = new Map<string, number | null>();
      const priceable = rows.filter((row) => {
        // Tokens but nothing to price them from: writing $0 would hide them, so the row stays unbackfilled.
        const found = (generations.get(String(row.trace_id)) ?? []).some((g) => g.inputTokens + g.outputTokens + (g.cachedInputTokens ?? 0) + (g.cacheWriteInputTokens ?? 0) > 0);
        if (!found && Number(row.total_tokens) > 0) result.without_generations += 1;
        return found || Number(row.total_tokens) === 0;
      });
      if (priceable.length === 0) continue;
      const rewritten = priceable.map((row) => {
        const cost = computeStoredTraceCost(generations.get(String(row.trace_id)) ?? [], catalog, parseChTime(row.timestamp) ?? new Date());
        costs.set(String(row.trace_id), cost.estimated_cost_usd);
        result.priced_at = cost.cost_priced_at;
        // A rewrite is a second version of the trace's row; first_processing (clickhouse/006, no
        // longer written or read) goes back to its default like every row written today.
        return { ...row, ...cost, first_processing: 0, processed_at: shiftTime(row.processed_at) };
      });
      await store.insert(table, rewritten, 'system');
      await rewriteSummaries(store, tenantId, projectId, costs);
      result.rewritten += rewritten.length;
    }
    if (batch.length < batchSize) break;
  }
  if (result.priced_at) result.priced_at = parseChTime(result.priced_at)?.toISOString() ?? null;
  return result;
}
