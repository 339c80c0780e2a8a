/**
 * The analytics query service: validate → build → print → run → shape, the one entry point that
 * the REST route, the query_project_analytics MCP tool and the preset views share. It takes the
 * tenant and project explicitly; checking that the caller may see the project is the caller's job
 * (the route helper does it; an MCP tool must do the same).
 */
import type { AnalyticsQueryResponse } from './query-shapes.js';
import type { Config } from '../../app/config.js';
import { ValidationError } from '../../platform/http/errors.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { isEngineError } from '../../platform/clickhouse/sql/engine-errors.js';
import { computeCostRows } from '../../cost/query-cost.js';
import { LIMITS, type CostMeasure, type Limits } from '../catalog.js';
import { buildQuery, DEFAULT_MAX_MEMORY_BYTES, type CompiledQuery } from './build.js';
import { Printer, type PrintContext, type PrintedQuery } from './print.js';
import { shapeRow } from './rows.js';
import { validateQuery, type ValidQuery } from './validate.js';
import { windowEcho } from './window.js';

export type { AnalyticsQueryResponse };

export interface AnalyticsQueryDeps {
  ch: ClickHouseStore;
  config: Pick<Config, 'queryTimeoutSeconds'>;
  /** Defaults to the catalog's LIMITS. */
  limits?: Limits;
}

export interface CompiledAnalyticsQuery extends PrintedQuery {
  query: ValidQuery;
  compiled: CompiledQuery;
}

export interface CompileOptions {
  timeoutSeconds: number;
  limits?: Limits;
  maxMemoryBytes?: number;
}

/** The pure half: body → validated query → AST → a statement of the SQL layer with its settings. Throws ValidationError (400). */
export function compileAnalyticsQuery(body: unknown, context: PrintContext, options: CompileOptions): CompiledAnalyticsQuery {
  const query = validateQuery(body, options.limits ?? LIMITS);
  const compiled = buildQuery(query, { timeoutSeconds: options.timeoutSeconds, maxMemoryBytes: options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES });
  return { query, compiled, ...Printer.query(compiled.statement, context) };
}

/** The engine error the caller caused and can act on (timeouts become 504 in the SQL layer's runner). */
function mapClickHouseError(error: unknown): unknown {
  if (isEngineError(error, 'MEMORY_LIMIT_EXCEEDED')) {
    return new ValidationError('The query needs more memory than a query may use; narrow the window, filters or group_by');
  }
  return error;
}

/** What a cost row looks like when the cost module has no row for a group (it should not happen). */
function missingCostRow(kind: CostMeasure): Record<string, unknown> {
  if (kind === 'generation_cost') return { estimated_cost_usd: null, priced: false };
  return {
    estimated_cost_usd: null,
    priced_tokens: 0,
    total_tokens: 0,
    priced_token_share: 0,
    unpriced_models: [],
    pricing_fetched_at: null,
    cost_source: 'query_time',
    cost_lower_bound: true,
    cost_lower_bound_reasons: ['prices_unavailable'],
    model_breakdown_truncated: false,
    attribution: { coverage: 'none', values: {} },
  };
}

async function costRows(deps: AnalyticsQueryDeps, context: PrintContext, compiled: CompiledAnalyticsQuery) {
  const cost = compiled.query.cost;
  if (!cost) return null;
  const rows = await computeCostRows(
    { ch: deps.ch, tenantId: context.tenantId, projectId: context.projectId, start: compiled.query.window.start, endExclusive: compiled.query.window.endExclusive, timeoutSeconds: deps.config.queryTimeoutSeconds },
    {
      kind: cost.agg,
      table: deps.ch.table(compiled.query.event.table),
      where: Printer.where(compiled.compiled.primary, context),
      // Each group expression keeps its own values.
      groups: compiled.compiled.groups.map((g) => ({ alias: g.alias, sql: Printer.expression(g.expr, context) })),
    },
  );
  return { kind: cost.agg, rows };
}

export async function runAnalyticsQuery(deps: AnalyticsQueryDeps, tenantId: string, projectId: string, body: unknown): Promise<AnalyticsQueryResponse> {
  const timeoutSeconds = deps.config.queryTimeoutSeconds;
  const context: PrintContext = { tenantId, projectId, qualify: (t) => deps.ch.table(t) };
  const compiled = compileAnalyticsQuery(body, context, { timeoutSeconds, limits: deps.limits });
  const { query, compiled: plan } = compiled;

  let raw: Record<string, unknown>[];
  let cost: Awaited<ReturnType<typeof costRows>>;
  try {
    [raw, cost] = await Promise.all([
      deps.ch.read<Record<string, unknown>>(compiled.statement, { lane: 'analytics', scope: { tenantId, projectId }, timeoutSeconds, settings: compiled.settings }),
      costRows(deps, context, compiled),
    ]);
  } catch (error) {
    throw mapClickHouseError(error);
  }

  const groupColumns = plan.columns.slice(0, query.groups.length);
  const rows = raw.map((r) => {
    const row = shapeRow(r, plan.columns);
    if (cost) {
      // The cost module keys groups by the values its driver returned: integer group values may
      // arrive quoted (64-bit on a ClickHouse server) or not (chdb's default), so try both forms.
      const values = groupColumns.map((c) => row[c.alias]);
      const quoted = groupColumns.map((c) => (c.kind === 'integer' && row[c.alias] !== null ? String(row[c.alias]) : row[c.alias]));
      Object.assign(row, cost.rows.get(JSON.stringify(values)) ?? cost.rows.get(JSON.stringify(quoted)) ?? missingCostRow(cost.kind));
    }
    return row;
  });
  return {
    rows,
    // True when the row count reaches limit (max_rows when no limit): more groups may exist.
    truncated: rows.length >= plan.limit,
    window: windowEcho(query.window),
  };
}
