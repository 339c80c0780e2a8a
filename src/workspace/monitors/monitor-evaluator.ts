import type { AppDeps } from '../../app/app-deps.js';
import type { ProcessedTrace } from '../../ingest/trace-hooks.js';
import { recordMonitorActivated } from './monitor-event-outbox.js';
import { kickRelay } from '../issues/issue-access.js';
import { attachToIssues, type FingerprintIssueInput, type FingerprintOccurrence } from '../issues/issue-open.js';
import { exceedsBaseline, recordBaseline, type Baseline, type WindowCounts } from './monitor-baseline.js';
import { observe, readsSpanAttributes, type TraceObservation } from './monitor-signal.js';
import { ActiveWindow } from './monitor-window.js';
import {
  activeWindowRows, cachedWatchingMonitors, findMonitor, learningTotals, observationsOf, updateMonitor, upsertObservations,
  type MonitorChange, type MonitorRow, type ObservationRow,
} from './monitor-store.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    monitorEvaluator?: MonitorEvaluator;
  }
}

export type Evaluation =
  | { outcome: 'skipped' }
  | { outcome: 'learning'; observed: number }
  | { outcome: 'activated'; baseline: Baseline }
  | { outcome: 'watching'; window: WindowCounts }
  | { outcome: 'triggered'; window: WindowCounts; issueId: string };

export function monitorFingerprint(monitorId: string): string {
  return `monitor:${monitorId}`;
}

function describe(monitor: MonitorRow, baseline: Baseline, window: WindowCounts): { title: string; description: string } {
  const unit = monitor.signal.kind === 'tool' ? 'calls' : 'traces';
  const subject = monitor.signal.kind === 'tool' ? `Tool '${monitor.signal.tool_name}'` : `Signal '${monitor.name}'`;
  return {
    title: `${subject}: matches above baseline (monitor '${monitor.name}')`.slice(0, 300),
    description:
      `Monitor '${monitor.name}' saw ${window.matches} matching ${unit} out of ${window.calls} in its latest ${window.traces} traces; ` +
      `its baseline is ${(baseline.rate * 100).toFixed(1)}% (${baseline.matches} of ${baseline.calls} ${unit} over ${baseline.traces} learning traces).`,
  };
}

function timeOf(text: string, fallback: string): Date {
  for (const candidate of [text, fallback]) {
    const d = new Date(candidate);
    if (candidate && !Number.isNaN(d.getTime())) return d;
  }
  return new Date();
}

/**
 * The matching spans as issue occurrences, described from the trace's failures and tool calls. A
 * signal trace without failed spans is attached once, with an empty span id.
 */
export function occurrencesOf(trace: ProcessedTrace, spanIds: string[]): FingerprintOccurrence[] {
  if (spanIds.length === 0) {
    return [{ spanId: '', occurredAt: timeOf(trace.timestamp, ''), errorType: '', spanName: trace.agentName || 'trace', toolName: '', message: '' }];
  }
  return spanIds.map((spanId) => {
    const failure = trace.failures.find((f) => f.span_id === spanId);
    const call = trace.toolCalls.find((c) => c.span_id === spanId);
    return {
      spanId,
      occurredAt: timeOf(failure?.timestamp ?? '', trace.timestamp),
      errorType: failure?.error_type ?? '',
      spanName: failure?.span_name ?? call?.name ?? '',
      toolName: call?.name ?? failure?.tool_name ?? '',
      message: (failure?.message || call?.output || '').slice(0, 5000),
    };
  });
}

const projectKey = (t: Pick<ProcessedTrace, 'tenantId' | 'projectId'>) => `${t.tenantId}\u0000${t.projectId}`;

/**
 * The background evaluator (docs/monitors.md). It listens to groups of processed traces and, per
 * learning or active monitor of their project, records an observation of each trace, ends learning
 * once enough traces were seen, and while active opens or updates the monitor's issue when matches
 * rise above the baseline. A monitor evaluates a group in one transaction holding its row lock (so
 * concurrent groups cannot both end learning or race on the window), in a fixed number of
 * statements: it reads what it needs once (the group's earlier observations, the learning totals or
 * the window), goes through the traces in order in memory — each sees the totals and window the
 * traces before it left, exactly as one transaction per trace would — and then writes the
 * observations, the monitor, its events and its issue's occurrences at once.
 */
export class MonitorEvaluator {
  constructor(private readonly deps: AppDeps) {}

  get learningMinTraces(): number {
    return this.deps.config.monitorLearningMinTraces;
  }

  /**
   * The hook registered in traceHooks().onTracesProcessed. One failing monitor does not stop the
   * others; a group that fails for a monitor is evaluated again trace by trace, each failure logged.
   */
  readonly onTracesProcessed = async (traces: ProcessedTrace[]): Promise<void> => {
    const byProject = new Map<string, ProcessedTrace[]>();
    for (const t of traces) {
      const group = byProject.get(projectKey(t));
      if (group) group.push(t);
      else byProject.set(projectKey(t), [t]);
    }
    for (const group of byProject.values()) {
      const monitors = await cachedWatchingMonitors(this.deps.sql, group[0].tenantId, group[0].projectId);
      for (const monitor of monitors) {
        try {
          this.wake(await this.evaluateGroup(monitor.id, group));
        } catch (error) {
          if (group.length === 1) {
            this.deps.logger.error({ err: error, monitor_id: monitor.id, trace_id: group[0].traceId }, 'monitor evaluation failed');
            continue;
          }
          this.deps.logger.warn({ err: error, monitor_id: monitor.id, traces: group.length }, 'monitor evaluation of a group failed; evaluating its traces one by one');
          for (const trace of group) {
            try {
              this.wake(await this.evaluateGroup(monitor.id, [trace]));
            } catch (each) {
              this.deps.logger.error({ err: each, monitor_id: monitor.id, trace_id: trace.traceId }, 'monitor evaluation failed');
            }
          }
        }
      }
    }
  };

  /** Whether a monitor watching the project reads span attributes (TraceHooks.spanAttributesWanted). */
  readonly spanAttributesWanted = async (tenantId: string, projectId: string): Promise<boolean> =>
    (await cachedWatchingMonitors(this.deps.sql, tenantId, projectId)).some((m) => readsSpanAttributes(m.signal));

  /** Issue lifecycle events (triggered) or monitor.activated went to the outbox: wake its readers. */
  private wake(evaluations: Evaluation[]): void {
    if (evaluations.some((e) => e.outcome === 'triggered' || e.outcome === 'activated')) kickRelay(this.deps);
  }

  /** What the monitor made of each trace of a group (of its project), in order. */
  async evaluateGroup(monitorId: string, traces: ProcessedTrace[]): Promise<Evaluation[]> {
    return (await this.deps.sql.begin(async (tx) => {
      const { tenantId, projectId } = traces[0];
      const monitor = await findMonitor(tx, tenantId, monitorId, { forUpdate: true });
      if (!monitor || monitor.project_id !== projectId || monitor.exploration_status === 'paused') return traces.map(() => ({ outcome: 'skipped' }) as const);
      const windowSize = Math.max(1, this.learningMinTraces);
      // A trace settled without span attributes (no monitor of the project read them then) is not
      // observed by a monitor that reads them: as for a trace settled just before it was created.
      const observes = (trace: ProcessedTrace) => trace.spanAttributes !== null || !readsSpanAttributes(monitor.signal);
      // The group's observations as they stand: stored, then as this group changes them.
      const traceIds = [...new Set(traces.filter(observes).map((t) => t.traceId))];
      if (traceIds.length === 0) return traces.map(() => ({ outcome: 'skipped' }) as const);
      const rows = new Map((await observationsOf(tx, monitor.id, traceIds)).map((r) => [r.trace_id, r]));
      let status: 'learning' | 'active' = monitor.exploration_status;
      let baseline = monitor.baseline;
      let totals: WindowCounts | null = null;
      let window: ActiveWindow | null = null;
      const change: MonitorChange = {};
      let activatedAt: Date | null = null;
      const triggers: { at: number; input: FingerprintIssueInput }[] = [];
      const evaluations: Evaluation[] = [];
      for (const trace of traces) {
        if (!observes(trace)) {
          evaluations.push({ outcome: 'skipped' });
          continue;
        }
        const observation: TraceObservation = observe(monitor.signal, trace);
        if (status === 'learning') totals ??= await learningTotals(tx, monitor.id);
        // Loaded when first needed: the group's own rows so far are learning ones, which the window leaves out.
        if (status === 'active') window ??= new ActiveWindow((await activeWindowRows(tx, monitor.id, windowSize)).map((r) => rows.get(r.trace_id) ?? r), windowSize);
        const prior = rows.get(trace.traceId);
        const row: ObservationRow = { trace_id: trace.traceId, phase: prior?.phase ?? status, calls: observation.calls, matches: observation.matches };
        rows.set(row.trace_id, row);
        if (totals && row.phase === 'learning') {
          totals = {
            traces: totals.traces + (prior ? 0 : 1),
            calls: totals.calls + row.calls - (prior?.phase === 'learning' ? prior.calls : 0),
            matches: totals.matches + row.matches - (prior?.phase === 'learning' ? prior.matches : 0),
          };
        }
        if (window && row.phase === 'active') window.observe(row, !prior);
        if (status === 'learning') {
          if (totals!.traces < this.learningMinTraces) {
            evaluations.push({ outcome: 'learning', observed: totals!.traces });
            continue;
          }
          activatedAt = new Date();
          baseline = recordBaseline(totals!, activatedAt);
          Object.assign(change, { exploration_status: 'active', baseline, activated_at: activatedAt });
          status = 'active';
          evaluations.push({ outcome: 'activated', baseline });
          continue;
        }
        const counts = window!.counts;
        if (observation.matches === 0 || !exceedsBaseline(baseline!, counts)) {
          evaluations.push({ outcome: 'watching', window: counts });
          continue;
        }
        const input = { tenantId, projectId, fingerprint: monitorFingerprint(monitor.id), ...describe(monitor, baseline!, counts), traceId: trace.traceId, otelTraceId: trace.otelTraceId, occurrences: occurrencesOf(trace, observation.matchedSpanIds) };
        triggers.push({ at: evaluations.length, input });
        evaluations.push({ outcome: 'triggered', window: counts, issueId: '' });
      }
      // Each trace once, in the order first seen, so new observations are stamped in that order.
      await upsertObservations(tx, monitor.id, traceIds.map((id) => rows.get(id)!));
      if (activatedAt) await recordMonitorActivated(tx, { tenantId, projectId, monitorId: monitor.id, occurredAt: activatedAt });
      if (triggers.length > 0) {
        const { results } = await attachToIssues(tx, triggers.map((t) => t.input));
        triggers.forEach((t, i) => ((evaluations[t.at] as { issueId: string }).issueId = results[i].issueId));
        Object.assign(change, { last_triggered_at: new Date(), last_issue_id: results[results.length - 1].issueId });
      }
      if (Object.keys(change).length > 0) await updateMonitor(tx, tenantId, monitor.id, change);
      return evaluations;
    }));
  }
}

export function monitorEvaluator(deps: AppDeps): MonitorEvaluator {
  return (deps.services.monitorEvaluator ??= new MonitorEvaluator(deps));
}
