import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { openTestClickHouse } from '../../helpers/test-clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * ClickHouse (embedded, or the run's server) for cost integration tests, and rows written straight into the event tables
 * the way ingestion writes them. Each test takes a fresh tenant and project.
 */
export async function openTestStore(): Promise<{ store: ClickHouseStore; close: () => Promise<void> }> {
  const dataDir = tempDataDir('lookout-cost-');
  const store = await openTestClickHouse({ database: 'lookout', dataDir });
  await migrateClickHouse(store, path.resolve('clickhouse'));
  return {
    store,
    async close() {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Scope {
  tenantId: string;
  projectId: string;
}

export function newScope(): Scope {
  return { tenantId: crypto.randomUUID(), projectId: crypto.randomUUID() };
}

export interface TraceSeed {
  traceId?: string;
  timestamp: string;
  agent?: string;
  inputTokens: number;
  outputTokens: number;
  basis: 'stored' | 'partial' | 'unpriced' | 'unavailable' | '';
  cost?: number | null;
  pricedTokens?: number;
  unpricedModels?: string[];
  pricedAt?: string | null;
  /** cost_model_costs: the stored per-model split of `cost`. */
  modelCosts?: Record<string, number>;
  processedAt?: string;
}

export async function seedTraces(store: ClickHouseStore, scope: Scope, traces: TraceSeed[]): Promise<string[]> {
  const rows = traces.map((t) => ({
    tenant_id: scope.tenantId,
    project_id: scope.projectId,
    timestamp: t.timestamp,
    actor: 'sdk',
    surface: 'otlp',
    trace_id: t.traceId ?? crypto.randomUUID(),
    agent_name: t.agent ?? 'agent-a',
    root_status_code: 'OK',
    has_root: 1,
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    total_tokens: t.inputTokens + t.outputTokens,
    estimated_cost_usd: t.cost ?? null,
    estimated_cost_basis: t.basis,
    cost_priced_tokens: t.pricedTokens ?? 0,
    cost_unpriced_models: t.unpricedModels ?? [],
    cost_priced_at: t.pricedAt ?? null,
    cost_model_costs: t.modelCosts ?? {},
    models: [],
    processed_at: t.processedAt ?? '2025-03-05 00:00:00.000',
  }));
  await store.client.insert({ table: store.table('event_trace_processed'), values: rows, format: 'JSONEachRow' });
  return rows.map((r) => r.trace_id);
}

export interface GenerationSeed {
  traceId: string;
  timestamp: string;
  model: string;
  provider?: string;
  input: number;
  output: number;
  cached?: number;
  /** Cache-write tokens (clickhouse/004_cache_write_tokens.sql). */
  cacheWrite?: number;
}

export async function seedGenerations(store: ClickHouseStore, scope: Scope, generations: GenerationSeed[]): Promise<void> {
  const rows = generations.map((g) => ({
    tenant_id: scope.tenantId,
    project_id: scope.projectId,
    timestamp: g.timestamp,
    actor: 'sdk',
    surface: 'otlp',
    model: g.model,
    provider: g.provider ?? '',
    trace_id: g.traceId,
    span_id: storedSpanId(crypto.randomBytes(8).toString('hex')),
    duration_ms: 100,
    input_tokens: g.input,
    output_tokens: g.output,
    cached_input_tokens: g.cached ?? 0,
    cache_write_input_tokens: g.cacheWrite ?? 0,
    tps: null,
    error: 0,
  }));
  await store.client.insert({ table: store.table('event_generation_completed'), values: rows, format: 'JSONEachRow' });
}

/**
 * Event tables keep 90 days (TTL), so seeded times are relative to today: day 0 is UTC midnight
 * ten days ago and WINDOW covers days 0 and 1.
 */
export const DAY0 = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 10 * 86_400_000);

/** ClickHouse DateTime64 text for `day` days after DAY0 at `time` (hh:mm:ss). */
export function at(day: number, time = '00:00:00'): string {
  const date = new Date(DAY0.getTime() + day * 86_400_000);
  return `${date.toISOString().slice(0, 10)} ${time}.000`;
}

/** The 'YYYY-MM-DD' of `day` days after DAY0. */
export function dateOf(day: number): string {
  return at(day).slice(0, 10);
}

export const WINDOW = { start: DAY0, endExclusive: new Date(DAY0.getTime() + 2 * 86_400_000) };
