import type { AppDeps } from '../../app/app-deps.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/http/errors.js';
import { isOtelTraceId, lookoutTraceId } from '../../spans/trace-id.js';
import { observedFigures, presetByKey } from './metric-presets.js';
import {
  createMetric,
  deleteMetric,
  ensurePresets,
  eventFigures,
  findMetric,
  listMetrics,
  upsertEvent,
  type CollectionType,
  type MetricRow,
} from './metric-store.js';
import { inSample, normalizeEventValue } from './metric-values.js';
import type { Metric, MetricEventResult, MetricInput, MonitorStatus } from './metric-schemas.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    metrics?: MetricService;
  }
}

export type { Metric, MetricInput, MonitorStatus };

export function monitorStatus(latest: number | null, threshold: number): MonitorStatus {
  if (latest === null) return 'no_data';
  return latest > threshold ? 'breached' : 'ok';
}

/** Default thresholds per collection type (docs/metrics.md): a failing share over half, any flag, any positive value. */
const DEFAULT_THRESHOLD: Record<CollectionType, number> = { BINARY: 0.5, FLAG: 0, VALUE: 0 };
const DEFAULT_INTERVAL_HOURS = 24;

/** The event answer (MetricEventResult), with id and created_at set exactly when the trace was sampled. */
export type RecordOutcome = MetricEventResult & ({ sampled: true; id: string; created_at: string } | { sampled: false; id: null; created_at: null });

export class MetricService {
  constructor(private readonly deps: AppDeps) {}

  private async view(row: MetricRow): Promise<Metric> {
    const preset = row.preset_key ? presetByKey(row.preset_key) : undefined;
    const figures = preset
      ? await observedFigures(this.deps.ch, preset, { tenantId: row.tenant_id, projectId: row.project_id, agentName: row.agent_name, intervalHours: row.interval_hours })
      : await eventFigures(this.deps.sql, row);
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      type: row.type,
      collection_type: row.collection_type,
      project_id: row.project_id,
      project_name: row.project_name,
      preset: row.preset_key !== null,
      agent_name: row.agent_name,
      sampling_rate: row.sampling_rate,
      created_at: row.created_at.toISOString(),
      total_events: figures.total_events,
      recent_events: figures.recent_events,
      monitor: {
        threshold: row.threshold,
        interval_value: row.interval_hours,
        latest_status: monitorStatus(figures.latest_value, row.threshold),
        latest_value: figures.latest_value,
      },
      collection_config: null,
    };
  }

  async list(tenantId: string, projectId: string): Promise<Metric[]> {
    await ensurePresets(this.deps.sql, tenantId, projectId);
    const rows = await listMetrics(this.deps.sql, tenantId, projectId);
    return Promise.all(rows.map((row) => this.view(row)));
  }

  async create(tenantId: string, projectId: string, input: MetricInput): Promise<Metric> {
    const name = input.name.trim();
    if (!name) throw new ValidationError('name: must not be blank');
    const type = input.type ?? 'SYNTHETIC';
    if (type === 'OBSERVED' && input.sampling_rate !== undefined && input.sampling_rate !== null) {
      throw new ValidationError('sampling_rate: only SYNTHETIC metrics are sampled');
    }
    const agentName = input.agent_name?.trim() || null;
    // Presets first, so a user metric cannot take a preset's name by racing the first listing.
    await ensurePresets(this.deps.sql, tenantId, projectId);
    const id = await createMetric(this.deps.sql, tenantId, projectId, {
      name,
      description: input.description ?? null,
      type,
      collectionType: input.collection_type,
      agentName,
      samplingRate: type === 'SYNTHETIC' ? (input.sampling_rate ?? 1) : null,
      threshold: input.monitor?.threshold ?? DEFAULT_THRESHOLD[input.collection_type],
      intervalHours: input.monitor?.interval_value ?? DEFAULT_INTERVAL_HOURS,
    });
    if (!id) throw new ConflictError(`A metric named '${name}' already exists in this project`);
    return this.view((await findMetric(this.deps.sql, tenantId, id))!);
  }

  /** A metric the principal may see: another tenant's, or outside a project-limited key, is a 404. */
  async load(principal: Principal, metricId: string): Promise<MetricRow> {
    const row = await findMetric(this.deps.sql, principal.tenantId, metricId);
    if (!row || (principal.projectId && principal.projectId !== row.project_id)) throw new NotFoundError('Metric not found');
    return row;
  }

  async get(principal: Principal, metricId: string): Promise<Metric> {
    return this.view(await this.load(principal, metricId));
  }

  async remove(principal: Principal, metricId: string): Promise<void> {
    const row = await this.load(principal, metricId);
    if (row.preset_key) throw new ConflictError('Preset metrics cannot be deleted');
    await deleteMetric(this.deps.sql, principal.tenantId, row.id);
  }

  /**
   * Records one event. trace_id is a Lookout trace UUID or an OpenTelemetry trace id (32 hex), which
   * is turned into the Lookout id of that trace in the metric's project so both spellings land on one
   * event. A SYNTHETIC metric keeps only traces in its sample.
   */
  async record(principal: Principal, metricId: string, rawTraceId: string, rawValue: unknown): Promise<RecordOutcome> {
    const row = await this.load(principal, metricId);
    if (row.preset_key || !row.collection_type) {
      throw new ValidationError('This preset metric is computed from trace data and takes no events');
    }
    const normalized = normalizeEventValue(row.collection_type, rawValue);
    if (!normalized.ok) throw new ValidationError(normalized.detail);
    const lowered = rawTraceId.trim().toLowerCase();
    if (!lowered) throw new ValidationError('trace_id: must not be blank');
    const traceId = isOtelTraceId(lowered) ? lookoutTraceId(row.project_id, lowered) : lowered;
    if (row.type === 'SYNTHETIC' && !inSample(row.id, traceId, row.sampling_rate)) {
      return { sampled: false, id: null, trace_id: traceId, created_at: null, value: normalized.value };
    }
    const event = await upsertEvent(this.deps.sql, row.id, traceId, normalized.value);
    return { sampled: true, ...event };
  }
}

export function metricService(deps: AppDeps): MetricService {
  return (deps.services.metrics ??= new MetricService(deps));
}
