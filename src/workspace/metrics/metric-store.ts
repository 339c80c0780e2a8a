import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { isUuid } from '../../platform/uuid.js';
import { PRESETS } from './metric-presets.js';

import type { CollectionType, EventValue, MetricType } from './metric-schemas.js';

export type { CollectionType, EventValue, MetricType };

export interface MetricRow {
  id: string;
  tenant_id: string;
  project_id: string;
  project_name: string;
  name: string;
  description: string | null;
  type: MetricType;
  collection_type: CollectionType | null;
  preset_key: string | null;
  agent_name: string | null;
  sampling_rate: number | null;
  threshold: number;
  interval_hours: number;
  created_at: Date;
}

export interface StoredEvent {
  id: string;
  trace_id: string;
  created_at: string;
  value: EventValue;
}

const SELECT_METRIC = `m.id, m.tenant_id, m.project_id, p.name as project_name, m.name, m.description, m.type,
  m.collection_type, m.preset_key, m.agent_name, m.sampling_rate, m.threshold, m.interval_hours, m.created_at`;

/** Creates the project's preset metrics if they are missing; safe to call concurrently. */
export async function ensurePresets(sql: SqlHandle, tenantId: string, projectId: string): Promise<void> {
  const rows = PRESETS.map((p) => ({
    id: crypto.randomUUID(),
    tenant_id: tenantId,
    project_id: projectId,
    name: p.name,
    description: p.description,
    type: 'OBSERVED',
    preset_key: p.key,
    threshold: p.threshold,
    interval_hours: p.intervalHours,
  }));
  // A user metric that already took a preset's name keeps it; that preset is then skipped.
  await sql`insert into metrics ${sql(rows)} on conflict do nothing`;
}

export interface NewMetric {
  name: string;
  description: string | null;
  type: MetricType;
  collectionType: CollectionType;
  agentName: string | null;
  samplingRate: number | null;
  threshold: number;
  intervalHours: number;
}

/** null when the name is taken in the project. */
export async function createMetric(sql: SqlHandle, tenantId: string, projectId: string, input: NewMetric): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`
    insert into metrics (id, tenant_id, project_id, name, description, type, collection_type, agent_name, sampling_rate, threshold, interval_hours)
    values (${crypto.randomUUID()}, ${tenantId}, ${projectId}, ${input.name}, ${input.description}, ${input.type},
            ${input.collectionType}, ${input.agentName}, ${input.samplingRate}, ${input.threshold}, ${input.intervalHours})
    on conflict do nothing
    returning id`;
  return row?.id ?? null;
}

export async function findMetric(sql: SqlHandle, tenantId: string, metricId: string): Promise<MetricRow | null> {
  if (!isUuid(metricId)) return null;
  const [row] = await sql<MetricRow[]>`
    select ${sql.unsafe(SELECT_METRIC)} from metrics m join projects p on p.id = m.project_id
    where m.tenant_id = ${tenantId} and m.id = ${metricId}`;
  return row ?? null;
}

/** Presets first (in their fixed order), then the project's own metrics by creation. */
export async function listMetrics(sql: SqlHandle, tenantId: string, projectId: string): Promise<MetricRow[]> {
  const rows = await sql<MetricRow[]>`
    select ${sql.unsafe(SELECT_METRIC)} from metrics m join projects p on p.id = m.project_id
    where m.tenant_id = ${tenantId} and m.project_id = ${projectId}
    order by (m.preset_key is null), m.created_at, m.id`;
  const order = new Map(PRESETS.map((p, i) => [p.key, i]));
  return rows.sort((a, b) => (a.preset_key && b.preset_key ? order.get(a.preset_key)! - order.get(b.preset_key)! : 0));
}

export async function deleteMetric(sql: SqlHandle, tenantId: string, metricId: string): Promise<void> {
  await sql`delete from metrics where tenant_id = ${tenantId} and id = ${metricId}`;
}

/** Records (or replaces, for the same trace) one event; returns the stored event. */
export async function upsertEvent(sql: SqlHandle, metricId: string, traceId: string, value: EventValue): Promise<StoredEvent> {
  const [row] = await sql<{ id: string; trace_id: string; created_at: Date; value: EventValue }[]>`
    insert into metric_events (id, metric_id, trace_id, value)
    values (${crypto.randomUUID()}, ${metricId}, ${traceId}, ${sql.json(value)})
    on conflict (metric_id, trace_id) do update set value = excluded.value, created_at = now()
    returning id, trace_id, created_at, value`;
  return { id: row.id, trace_id: row.trace_id, created_at: row.created_at.toISOString(), value: row.value };
}

export interface EventFigures {
  total_events: number;
  recent_events: StoredEvent[];
  /** BINARY: share of true; VALUE: mean; FLAG: count — over the interval; null when no event. */
  latest_value: number | null;
}

export async function eventFigures(sql: SqlHandle, metric: MetricRow): Promise<EventFigures> {
  const since = new Date(Date.now() - metric.interval_hours * 3_600_000);
  const [[totals], recent, [latest]] = await Promise.all([
    sql<{ n: number }[]>`select count(*)::int as n from metric_events where metric_id = ${metric.id}`,
    sql<{ id: string; trace_id: string; created_at: Date; value: EventValue }[]>`
      select id, trace_id, created_at, value from metric_events where metric_id = ${metric.id}
      order by created_at desc, id desc limit 10`,
    sql<{ n: number; true_share: number | null; mean: number | null }[]>`
      select count(*)::int as n,
        avg(case when value = 'true'::jsonb then 1.0 when value = 'false'::jsonb then 0.0 end)::float8 as true_share,
        avg(case when jsonb_typeof(value) = 'number' then (value #>> '{}')::float8 end)::float8 as mean
      from metric_events where metric_id = ${metric.id} and created_at >= ${since}`,
  ]);
  let latestValue: number | null = null;
  if (latest.n > 0) {
    if (metric.collection_type === 'BINARY') latestValue = latest.true_share;
    else if (metric.collection_type === 'VALUE') latestValue = latest.mean;
    else latestValue = latest.n;
  }
  return {
    total_events: totals.n,
    recent_events: recent.map((r) => ({ id: r.id, trace_id: r.trace_id, created_at: r.created_at.toISOString(), value: r.value })),
    latest_value: latestValue,
  };
}
