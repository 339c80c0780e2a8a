import { getGeneralView, getWindowView, listTraces } from '../api/endpoints.js';
import { Freshness } from '../components/freshness.js';
import { getHourlySeries, type HourlySeries } from '../api/hourly-series.js';
import type { DatedValue, GeneralView, WindowView } from '../api/types.js';
import { CallLink, DrillDownNote } from '../components/call-link.js';
import { CostDetails, CostValue } from '../components/cost-summary.js';
import { ExporterSnippet } from '../components/exporter-snippet.js';
import { SortableTable } from '../components/sortable-table.js';
import { Stat } from '../components/stat.js';
import { Loaded } from '../components/states.js';
import { TimeChart, type ChartDrill } from '../components/time-chart.js';
import { tracesDrill } from '../drill-down.js';
import { WindowPicker } from '../components/window-picker.js';
import { formatCount, formatMs, formatNumber, formatRate } from '../format.js';
import type { WindowSelection } from '../time-window.js';
import { useResource, type Resource } from '../use-resource.js';

/**
 * Puts several API series on one time axis: the dates the API returned, in order, and each
 * series' own value at that date (null where a series has no point). No value is derived.
 */
export function alignByDate<P extends { date: string }>(seriesList: P[][], pick: ((point: P) => number | null)[]): { dates: string[]; values: (number | null)[][] } {
  const dates = [...new Set(seriesList.flatMap((points) => points.map((p) => p.date)))].sort();
  const values = seriesList.map((points, i) => {
    const byDate = new Map(points.map((p) => [p.date, p]));
    return dates.map((date) => {
      const point = byDate.get(date);
      return point === undefined ? null : pick[i](point);
    });
  });
  return { dates, values };
}

const value = (p: DatedValue) => p.value;

/** What the model-call charts draw: one date axis and each series' value per date. */
interface CallCharts {
  dates: string[];
  requests: (number | null)[];
  errors: (number | null)[];
  speed: (number | null)[][];
  prompt: (number | null)[];
  completion: (number | null)[];
}

function callChartsFromView(view: GeneralView): CallCharts {
  const traffic = alignByDate([view.requests, view.errors], [value, value]);
  const speed = alignByDate([view.speed_percentiles_timeseries, view.speed_percentiles_timeseries, view.speed_percentiles_timeseries], [(p) => p.p50, (p) => p.p95, (p) => p.p99]);
  const tokens = alignByDate([view.prompt_tokens, view.completion_tokens], [value, value]);
  return { dates: traffic.dates, requests: traffic.values[0], errors: traffic.values[1], speed: speed.values, prompt: tokens.values[0], completion: tokens.values[1] };
}

function callChartsFromHours(hours: HourlySeries): CallCharts {
  return {
    dates: hours.dates,
    requests: hours.requests,
    errors: hours.errors,
    speed: [hours.speed.p50, hours.speed.p95, hours.speed.p99],
    prompt: hours.promptTokens,
    completion: hours.completionTokens,
  };
}

function Charts({ data, drill }: { data: CallCharts; drill: ChartDrill }) {
  return (
    <div class="chart-grid">
      <TimeChart
        title="Model calls and failed model calls"
        testId="chart-requests"
        drill={drill}
        dates={data.dates}
        format={formatCount}
        series={[
          { label: 'Requests', values: data.requests, color: '#2f6fde' },
          { label: 'Errors', values: data.errors, color: '#d23c3c' },
        ]}
      />
      <TimeChart
        title="Generation speed percentiles (tokens/s)"
        testId="chart-speed"
        drill={drill}
        trimOutliers
        dates={data.dates}
        format={formatNumber}
        series={[
          { label: 'p50', values: data.speed[0], color: '#2f9e6e' },
          { label: 'p95', values: data.speed[1], color: '#d68a1a' },
          { label: 'p99', values: data.speed[2], color: '#b03fb5', offScale: true },
        ]}
      />
      <TimeChart
        title="Tokens"
        testId="chart-tokens"
        drill={drill}
        dates={data.dates}
        format={formatCount}
        series={[
          { label: 'Prompt', values: data.prompt, color: '#5a5fd6' },
          { label: 'Completion', values: data.completion, color: '#17a2b8' },
        ]}
      />
    </div>
  );
}

/** Agent runs (traces) from the window view: latency of the root span over time, failed runs. */
function Runs({ view, hours, drill }: { view: WindowView; hours: HourlySeries | null; drill: ChartDrill }) {
  const latency = hours
    ? { dates: hours.dates, values: [hours.latency.p50, hours.latency.p95] }
    : alignByDate([view.latency.points, view.latency.points], [(p) => p.p50, (p) => p.p95]);
  return (
    <section class="runs" aria-labelledby="runs-title">
      <h2 id="runs-title">Agent runs</h2>
      <dl class="stat-grid" data-testid="run-totals">
        <Stat label="Runs" testId="runs-traces" hint="Agent runs (traces) that started in the window">
          {formatCount(view.totals.traces)}
        </Stat>
        <Stat label="Failed runs" testId="runs-failed" note="root span failed" hint="Agent runs whose root span ended with an error status">
          {formatCount(view.totals.failed_runs)}
        </Stat>
        <Stat label="Run error rate" testId="runs-error-rate" note="of runs with a known root status" hint="Failed runs among runs whose root status is known">
          {formatRate(view.totals.error_rate)}
        </Stat>
        <Stat label="Run latency p50" testId="runs-p50">
          {formatMs(view.totals.p50)}
        </Stat>
        <Stat label="Run latency p95" testId="runs-p95">
          {formatMs(view.totals.p95)}
        </Stat>
      </dl>
      <div class="chart-grid">
        <TimeChart
          title="Run latency percentiles"
          testId="chart-latency"
          drill={drill}
          trimOutliers
          dates={latency.dates}
          format={formatMs}
          series={[
            { label: 'p50', values: latency.values[0], color: '#2f9e6e' },
            { label: 'p95', values: latency.values[1], color: '#d68a1a' },
          ]}
        />
      </div>
    </section>
  );
}

/** The general view's figures and charts, then the agent runs of the window view. */
function GeneralPanels({ projectId, view, runs, hours, drill }: { projectId: string; view: Resource<GeneralView>; runs: Resource<WindowView>; hours: Resource<HourlySeries> | null; drill: ChartDrill }) {
  return (
    <>
      <h2 class="section-title">Model calls</h2>
      <Loaded resource={view} label="Loading the general view…">
        {(data) => {
          const totals = data.totals;
          return (
            <>
              <dl class="stat-grid" data-testid="overview-totals">
                <Stat label="Model calls" testId="total-requests" hint="Requests: generation.completed events">
                  {formatCount(totals.requests)}
                </Stat>
                <Stat label="Failed model calls" testId="total-errors" note="model calls, not runs" hint="Model calls (generation spans) that ended with an error status; failed agent runs are counted below">
                  {formatCount(totals.errors)}
                </Stat>
                <Stat label="Speed p50 (tok/s)" testId="total-speed-p50" hint="Output tokens per second of model calls">
                  {formatNumber(totals.speed_percentiles?.p50)}
                </Stat>
                <Stat label="Speed p95 (tok/s)" testId="total-speed-p95">
                  {formatNumber(totals.speed_percentiles?.p95)}
                </Stat>
                <Stat label="Speed p99 (tok/s)" testId="total-speed-p99">
                  {formatNumber(totals.speed_percentiles?.p99)}
                </Stat>
                <Stat label="Prompt tokens" testId="total-prompt-tokens">
                  {formatCount(totals.prompt_tokens)}
                </Stat>
                <Stat label="Completion tokens" testId="total-completion-tokens">
                  {formatCount(totals.completion_tokens)}
                </Stat>
                <Stat label="Estimated cost" testId="total-cost" hint="Observed tokens × public list prices; not an invoice">
                  <CostValue value={totals.estimated_cost_usd} lowerBound={totals.cost_lower_bound} />
                </Stat>
              </dl>
              <CostDetails cost={totals} />
              {hours ? (
                <Loaded resource={hours} label="Loading hourly series…">
                  {(hourly) => (
                    <>
                      <Charts data={callChartsFromHours(hourly)} drill={drill} />
                      <Loaded resource={runs} label="Loading agent runs…">
                        {(runData) => <Runs view={runData} hours={hourly} drill={drill} />}
                      </Loaded>
                    </>
                  )}
                </Loaded>
              ) : (
                <>
                  <Charts data={callChartsFromView(data)} drill={drill} />
                  <Loaded resource={runs} label="Loading agent runs…">
                    {(runData) => <Runs view={runData} hours={null} drill={drill} />}
                  </Loaded>
                </>
              )}
              <section class="panel">
                <h2>Top models</h2>
                {data.top_models.length === 0 ? (
                  <p class="muted">No model calls in this window.</p>
                ) : (
                  <>
                    <DrillDownNote what="model" counted="Calls" />
                    <SortableTable
                      testId="top-models"
                      rows={data.top_models}
                      rowKey={(row) => row.model}
                      initialSort={{ key: 'count', direction: 'desc' }}
                      columns={[
                        { key: 'model', label: 'Model', value: (row) => row.model, render: (row) => <CallLink projectId={projectId} window={data.window} filter="model" name={row.model} /> },
                        { key: 'count', label: 'Calls', value: (row) => row.count, render: (row) => formatCount(row.count), numeric: true },
                      ]}
                    />
                  </>
                )}
              </section>
            </>
          );
        }}
      </Loaded>
    </>
  );
}

export function OverviewPage({ projectId, window, customActive }: { projectId: string; window: WindowSelection; customActive: boolean }) {
  const view = useResource(() => getGeneralView(projectId, window), [projectId, window.start, window.endExclusive, window.granularity, window.hours]);
  const runs = useResource(() => getWindowView(projectId, window), [projectId, window.start, window.endExclusive, window.granularity]);
  // Hour buckets (windows up to 48 h) come from the query DSL; the views' totals stay as they are.
  const hourly = window.granularity === 'hour';
  const hours = useResource(() => (hourly ? getHourlySeries(projectId, window) : Promise.resolve(null)), [projectId, window.start, window.endExclusive, hourly]);
  // Whether the project has any trace at all decides between the charts and the "send one" snippet.
  const anyTrace = useResource(() => listTraces(projectId, { limit: 1 }), [projectId]);
  const noTraces = anyTrace.state === 'ok' && anyTrace.data.traces.length === 0;

  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <Freshness data={view.data} />
        <WindowPicker window={window} customActive={customActive} />
      </div>
      {/* Nothing to chart yet: the one useful thing to show is how to send a first trace. */}
      {noTraces ? <ExporterSnippet projectId={projectId} /> : <GeneralPanels projectId={projectId} view={view} runs={runs} hours={hourly ? (hours as Resource<HourlySeries>) : null} drill={tracesDrill(projectId, window)} />}
    </>
  );
}
