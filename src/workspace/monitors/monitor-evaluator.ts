import type { AppDeps } from '../../app-deps.js';
import type { ProcessedTrace } from '../../trace-hooks.js';
import { recordMonitorActivated } from './monitor-event-outbox.js';
import { kickRelay } from '../issues/issue-access.js';
import { openOrAttachIssue, type FingerprintOccurrence } from '../issues/issue-open.js';
import { exceedsBaseline, recordBaseline, type Baseline, type WindowCounts } from './monitor-baseline.js';
import { observe, type TraceObservation } from './monitor-signal.js';
import { activeWindow, cachedWatchingMonitors, findMonitor, learningTotals, updateMonitor, upsertObservation, type MonitorRow } from './monitor-store.js';

declare module '../../app-deps.js' {
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

/**
 * The background evaluator (docs/monitors.md). It listens to processed traces and, per learning or
 * active monitor of the trace's project, records an observation, ends learning once enough traces
 * were seen, and while active opens or updates the monitor's issue when matches rise above the
 * baseline. Each monitor is evaluated in its own transaction holding the monitor's row lock, so
 * concurrent traces cannot both end learning or race on the window.
 */
export class MonitorEvaluator {
  constructor(private readonly deps: AppDeps) {}

  get learningMinTraces(): number {
    return this.deps.config.monitorLearningMinTraces;
  }

  /** The hook registered in traceHooks().onTraceProcessed. One failing monitor does not stop the others. */
  readonly onTraceProcessed = async (trace: ProcessedTrace): Promise<void> => {
    const monitors = await cachedWatchingMonitors(this.deps.sql, trace.tenantId, trace.projectId);
    for (const monitor of monitors) {
      try {
        const evaluation = await this.evaluate(monitor.id, trace);
        // Issue lifecycle events (triggered) or monitor.activated went to the outbox in that transaction: wake its readers.
        if (evaluation.outcome === 'triggered' || evaluation.outcome === 'activated') kickRelay(this.deps);
      } catch (error) {
        this.deps.logger.error({ err: error, monitor_id: monitor.id, trace_id: trace.traceId }, 'monitor evaluation failed');
      }
    }
  };

  async evaluate(monitorId: string, trace: ProcessedTrace): Promise<Evaluation> {
    return (await this.deps.sql.begin(async (tx) => {
      const monitor = await findMonitor(tx, trace.tenantId, monitorId, { forUpdate: true });
      if (!monitor || monitor.project_id !== trace.projectId || monitor.exploration_status === 'paused') return { outcome: 'skipped' } as const;
      const observation: TraceObservation = observe(monitor.signal, trace);
      if (monitor.exploration_status === 'learning') {
        await upsertObservation(tx, monitor.id, trace.traceId, 'learning', observation);
        const totals = await learningTotals(tx, monitor.id);
        if (totals.traces < this.learningMinTraces) return { outcome: 'learning', observed: totals.traces } as const;
        const now = new Date();
        const baseline = recordBaseline(totals, now);
        await updateMonitor(tx, trace.tenantId, monitor.id, { exploration_status: 'active', baseline, activated_at: now });
        await recordMonitorActivated(tx, { tenantId: trace.tenantId, projectId: trace.projectId, monitorId: monitor.id, occurredAt: now });
        return { outcome: 'activated', baseline } as const;
      }
      await upsertObservation(tx, monitor.id, trace.traceId, 'active', observation);
      const window = await activeWindow(tx, monitor.id, Math.max(1, this.learningMinTraces));
      const baseline = monitor.baseline!;
      if (observation.matches === 0 || !exceedsBaseline(baseline, window)) return { outcome: 'watching', window } as const;
      const { issueId } = await openOrAttachIssue(tx, {
        tenantId: trace.tenantId,
        projectId: trace.projectId,
        fingerprint: monitorFingerprint(monitor.id),
        ...describe(monitor, baseline, window),
        traceId: trace.traceId,
        otelTraceId: trace.otelTraceId,
        occurrences: occurrencesOf(trace, observation.matchedSpanIds),
      });
      await updateMonitor(tx, trace.tenantId, monitor.id, { last_triggered_at: new Date(), last_issue_id: issueId });
      return { outcome: 'triggered', window, issueId } as const;
    })) as Evaluation;
  }
}

export function monitorEvaluator(deps: AppDeps): MonitorEvaluator {
  return (deps.services.monitorEvaluator ??= new MonitorEvaluator(deps));
}
