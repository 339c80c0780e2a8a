/**
 * What each preset view must answer for the runs of dataset.ts, computed here in plain
 * JavaScript from the runs themselves (not from the service's code), following the rules written
 * in docs/analytics.md and, for cost, docs/cost.md.
 */
import { PRICES, RUNS, runStart, type Run } from './dataset.js';

export type Granularity = 'day' | 'week' | 'month';

export interface Window {
  start: Date;
  endExclusive: Date;
}

export interface TraceFacts {
  run: Run;
  start: Date;
  agent: string;
  hasRoot: boolean;
  failed: boolean;
  rootDuration: number | null;
  spanErrors: number;
  input: number;
  output: number;
  models: string[];
  cost: number;
  pricedTokens: number;
  unpriced: string[];
}

export interface GenerationFacts {
  at: Date;
  model: string;
  provider: string;
  input: number;
  output: number;
  tps: number;
}

export interface ToolFacts {
  at: Date;
  name: string;
  agent: string;
  error: boolean;
  duration: number;
  traceN: number;
}

export function traceFacts(base: Date): TraceFacts[] {
  return RUNS.map((run) => {
    let cost = 0;
    let pricedTokens = 0;
    const unpriced = new Set<string>();
    for (const g of run.generations) {
      const price = PRICES[g.model];
      if (!price) {
        unpriced.add(g.model);
        continue;
      }
      cost += (g.input * price.input + g.output * price.output) / 1e6;
      pricedTokens += g.input + g.output;
    }
    return {
      run,
      start: runStart(base, run),
      agent: run.agent,
      hasRoot: run.root !== null,
      failed: run.root?.status === 'ERROR',
      rootDuration: run.root?.duration ?? null,
      spanErrors: (run.root?.status === 'ERROR' ? 1 : 0) + run.tools.filter((t) => t.error).length,
      input: run.generations.reduce((s, g) => s + g.input, 0),
      output: run.generations.reduce((s, g) => s + g.output, 0),
      models: [...new Set(run.generations.map((g) => g.model))],
      cost,
      pricedTokens,
      unpriced: [...unpriced],
    };
  });
}

export function generationFacts(base: Date): GenerationFacts[] {
  return RUNS.flatMap((run) =>
    run.generations.map((g) => ({
      at: new Date(runStart(base, run).getTime() + g.at),
      model: g.model,
      provider: g.provider,
      input: g.input,
      output: g.output,
      tps: g.output / (g.duration / 1000),
    })),
  );
}

export function toolFacts(base: Date): ToolFacts[] {
  return RUNS.flatMap((run) =>
    run.tools.map((t) => ({ at: new Date(runStart(base, run).getTime() + t.at), name: t.name, agent: run.agent, error: t.error, duration: t.duration, traceN: run.n })),
  );
}

// ---- buckets, written out independently of src/analytics/views/time-buckets.ts ----------------

export function bucketOf(at: Date, g: Granularity): string {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  if (g === 'month') return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
  if (g === 'week') return new Date(Date.UTC(y, m, d - at.getUTCDay())).toISOString().slice(0, 10);
  return new Date(Date.UTC(y, m, d)).toISOString().slice(0, 10);
}

export function buckets(w: Window, g: Granularity): string[] {
  const out: string[] = [];
  let cursor = new Date(`${bucketOf(w.start, g)}T00:00:00Z`);
  while (cursor < w.endExclusive) {
    out.push(cursor.toISOString().slice(0, 10));
    if (g === 'month') cursor = new Date(Date.UTC(cursor.getUTCFullYear(), cursor.getUTCMonth() + 1, 1));
    else cursor = new Date(cursor.getTime() + (g === 'week' ? 7 : 1) * 86_400_000);
  }
  return out;
}

export const inWindow = (w: Window) => (at: Date) => at >= w.start && at < w.endExclusive;

/** ClickHouse quantileExact: the element at floor(level × n) of the sorted values. */
export function quantile(values: number[], level: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(level * sorted.length))];
}

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0);
const mean = (values: number[]) => (values.length ? sum(values) / values.length : null);

// ---- cost (docs/cost.md, every trace priced at write time) --------------------------------------

export function costObject(traces: TraceFacts[], pricingFetchedAt: string) {
  const total = sum(traces.map((t) => t.input + t.output));
  const priced = sum(traces.map((t) => t.pricedTokens));
  const dollars = sum(traces.map((t) => t.cost));
  const unpriced = [...new Set(traces.flatMap((t) => t.unpriced))].sort();
  const lowerBound = unpriced.length > 0;
  return {
    estimated_cost_usd: lowerBound && priced === 0 ? null : dollars,
    priced_token_share: total > 0 ? priced / total : 1,
    priced_tokens: priced,
    total_tokens: total,
    unpriced_models: unpriced,
    pricing_fetched_at: pricingFetchedAt,
    cost_source: 'stored',
    cost_lower_bound: lowerBound,
    cost_lower_bound_reasons: lowerBound ? ['unpriced_models'] : [],
    model_breakdown_truncated: false,
    cost_rollup_truncated: false,
  };
}

// ---- the views ----------------------------------------------------------------------------------

export function expectedGeneral(base: Date, w: Window, g: Granularity, pricingFetchedAt: string) {
  const gens = generationFacts(base).filter((x) => inWindow(w)(x.at));
  const dates = buckets(w, g);
  const of = (date: string) => gens.filter((x) => bucketOf(x.at, g) === date);
  const series = (pick: (xs: GenerationFacts[]) => number) => dates.map((date) => ({ date, value: pick(of(date)) }));
  const pct = (xs: GenerationFacts[]) => ({ p50: quantile(xs.map((x) => x.tps), 0.5), p95: quantile(xs.map((x) => x.tps), 0.95), p99: quantile(xs.map((x) => x.tps), 0.99) });
  const counts = new Map<string, number>();
  for (const x of gens) counts.set(x.model, (counts.get(x.model) ?? 0) + 1);
  return {
    requests: series((xs) => xs.length),
    errors: series(() => 0),
    speed: series((xs) => mean(xs.map((x) => x.tps)) ?? 0),
    prompt_tokens: series((xs) => sum(xs.map((x) => x.input))),
    completion_tokens: series((xs) => sum(xs.map((x) => x.output))),
    top_models: [...counts].map(([model, count]) => ({ model, count })).sort((a, b) => b.count - a.count || a.model.localeCompare(b.model)),
    speed_percentiles_timeseries: dates.map((date) => ({ date, ...pct(of(date)) })),
    totals: {
      ...costObject(traceFacts(base).filter((t) => inWindow(w)(t.start)), pricingFetchedAt),
      requests: gens.length,
      errors: 0,
      avg_speed: mean(gens.map((x) => x.tps)),
      prompt_tokens: sum(gens.map((x) => x.input)),
      completion_tokens: sum(gens.map((x) => x.output)),
      speed_percentiles: pct(gens),
    },
  };
}

function outcomes(traces: TraceFacts[]) {
  const known = traces.filter((t) => t.hasRoot).length;
  const failed = traces.filter((t) => t.failed).length;
  return { failed_runs: failed, root_status_known: known, root_absent: traces.length - known, traces: traces.length, error_rate: known > 0 ? failed / known : null };
}

export function expectedWindow(base: Date, w: Window, g: Granularity, pricingFetchedAt: string) {
  const traces = traceFacts(base).filter((t) => inWindow(w)(t.start));
  const runGens = traces.flatMap((t) => t.run.generations);
  const durations = (ts: TraceFacts[]) => ts.flatMap((t) => (t.rootDuration === null ? [] : [t.rootDuration]));
  const { error_rate, ...counts } = outcomes(traces);
  const n = traces.length;
  const entry = (observed: number, eligible: number, isLowerBound = false) => ({ observed, eligible, is_lower_bound: isLowerBound });
  return {
    latency: {
      granularity: g,
      points: buckets(w, g).map((date) => {
        const ds = durations(traces.filter((t) => bucketOf(t.start, g) === date));
        return { date, p50: quantile(ds, 0.5), p95: quantile(ds, 0.95) };
      }),
    },
    totals: { p50: quantile(durations(traces), 0.5), p95: quantile(durations(traces), 0.95), ...counts, error_rate },
    coverage: {
      // Every capability is sent somewhere in the data set.
      capability: { root_status: true, root_duration: true, agents: true, tokens: true, model: true, provider: true, cost_basis: true, tools: true },
      window: {
        root_status: entry(traces.filter((t) => t.hasRoot).length, n),
        root_duration: entry(traces.filter((t) => t.rootDuration !== null).length, n),
        agents: entry(traces.filter((t) => t.agent !== '').length, n),
        tokens: entry(traces.filter((t) => t.input + t.output > 0).length, n),
        model: entry(traces.filter((t) => t.models.length > 0).length, n),
        // Model and tool calls of the window's runs (docs/analytics.md "Coverage"), wherever they fall.
        provider: entry(runGens.filter((g) => g.provider !== '').length, runGens.length),
        cost_basis: entry(n, n),
        tools: entry(traces.filter((t) => t.run.tools.length > 0).length, n, true),
      },
      window_traces: n,
    },
    cost: {
      ...costObject(traces, pricingFetchedAt),
      model_tokens_truncated: false,
      unpriced_models_truncated: false,
      cost_trace_counts: {
        stored: n,
        live_priced: 0,
        unbackfilled: 0,
        stored_unpriced: traces.filter((t) => t.unpriced.length > 0).length,
        stored_unavailable: 0,
        breakdown_truncated: 0,
      },
    },
  };
}

export function expectedBase(base: Date, w: Window, g: Granularity, pricingFetchedAt: string) {
  const traces = traceFacts(base).filter((t) => inWindow(w)(t.start));
  const dates = buckets(w, g);
  const of = (date: string) => traces.filter((t) => bucketOf(t.start, g) === date);
  return {
    traces: dates.map((date) => ({ date, value: of(date).length })),
    errors: dates.map((date) => {
      const { error_rate: _rate, ...counts } = outcomes(of(date));
      return { date, span_errors: sum(of(date).map((t) => t.spanErrors)), ...counts };
    }),
    tokens: dates.map((date) => ({ date, input_tokens: sum(of(date).map((t) => t.input)), output_tokens: sum(of(date).map((t) => t.output)) })),
    cost: dates.map((date) => ({ date, traces: of(date).length, ...costObject(of(date), pricingFetchedAt) })),
    // Every trace was priced at write time: nothing is attributed per model at query time.
    cost_by_model: dates.map((date) => ({ date, values: {}, coverage: of(date).length === 0 ? 'all' : 'none', attributed_traces: 0, traces: of(date).length })),
    cost_by_model_source: 'query_time',
    cost_by_model_coverage: traces.length === 0 ? 'all' : 'none',
  };
}

export function expectedAgentScorecard(base: Date, w: Window) {
  const traces = traceFacts(base).filter((t) => inWindow(w)(t.start));
  const tools = toolFacts(base).filter((x) => inWindow(w)(x.at));
  const agents = [...new Set(traces.map((t) => t.agent))];
  return agents
    .map((agent) => {
      const mine = traces.filter((t) => t.agent === agent);
      const ds = mine.flatMap((t) => (t.rootDuration === null ? [] : [t.rootDuration]));
      const o = outcomes(mine);
      const unpriced = mine.some((t) => t.unpriced.length > 0);
      const priced = sum(mine.map((t) => t.pricedTokens));
      return {
        agent,
        traces: mine.length,
        p50: quantile(ds, 0.5),
        p95: quantile(ds, 0.95),
        error_rate: o.error_rate,
        root_status_known: o.root_status_known,
        tools_used: new Set(tools.filter((t) => t.agent === agent).map((t) => t.name)).size,
        tools_used_is_lower_bound: o.root_absent > 0,
        tokens: sum(mine.map((t) => t.input + t.output)),
        cost: unpriced && priced === 0 ? null : sum(mine.map((t) => t.cost)),
        cost_is_lower_bound: unpriced,
        cost_source: 'stored',
        cost_lower_bound_reasons: unpriced ? ['unpriced_models'] : [],
        model_breakdown_truncated: false,
      };
    })
    .sort((a, b) => b.traces - a.traces || a.agent.localeCompare(b.agent));
}

export function expectedToolAggregates(base: Date, w: Window, g: Granularity) {
  const tools = toolFacts(base).filter((x) => inWindow(w)(x.at));
  const names = [...new Set(tools.map((t) => t.name))];
  const rows = names
    .map((tool) => {
      const calls = tools.filter((t) => t.name === tool);
      const errors = calls.filter((t) => t.error).length;
      return {
        tool,
        calls: calls.length,
        errors,
        error_rate: errors / calls.length,
        p50: quantile(calls.map((t) => t.duration), 0.5),
        p95: quantile(calls.map((t) => t.duration), 0.95),
        traces: new Set(calls.map((t) => t.traceN)).size,
        // Tool spans of the data set have no model calls below them.
        output_tokens: 0,
      };
    })
    .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
  const dates = buckets(w, g);
  const volumeOf = (failing: boolean) =>
    dates.map((date) => {
      const here = tools.filter((t) => bucketOf(t.at, g) === date && (!failing || t.error));
      const byTool: Record<string, number> = {};
      for (const t of [...here].sort((a, b) => a.name.localeCompare(b.name))) byTool[t.name] = (byTool[t.name] ?? 0) + 1;
      return { date, value: here.length, by_tool: byTool };
    });
  const allErrors = tools.filter((t) => t.error).length;
  let running = 0;
  const concentration = rows
    .filter((r) => r.errors > 0)
    .sort((a, b) => b.errors - a.errors || a.tool.localeCompare(b.tool))
    .map((r) => {
      running += r.errors;
      return { tool: r.tool, errors: r.errors, share: r.errors / allErrors, cumulative_share: running / allErrors };
    });
  return { granularity: g, rows, volume: volumeOf(false), failing_volume: volumeOf(true), error_concentration: concentration };
}

export function expectedModelScorecard(base: Date, w: Window, pricingFetchedAt: string) {
  const gens = generationFacts(base).filter((x) => inWindow(w)(x.at));
  const traces = traceFacts(base).filter((t) => inWindow(w)(t.start));
  const models = [...new Set(gens.map((x) => x.model))];
  // Per model: the list-price cost of its calls in the runs that started in the window (every
  // run was priced at write time, which stores the per-model split alongside the total).
  const costByModel = new Map<string, number>();
  for (const t of traces) {
    for (const g of t.run.generations) {
      const price = PRICES[g.model];
      if (price) costByModel.set(g.model, (costByModel.get(g.model) ?? 0) + (g.input * price.input + g.output * price.output) / 1e6);
    }
  }
  const rows = models
    .map((model) => {
      const mine = gens.filter((x) => x.model === model);
      const input = sum(mine.map((x) => x.input));
      const output = sum(mine.map((x) => x.output));
      return {
        model,
        traces: traces.filter((t) => t.models.includes(model)).length,
        tokens: input + output,
        input_tokens: input,
        output_tokens: output,
        avg_speed: mean(mine.map((x) => x.tps)),
        priced: model in PRICES,
        estimated_cost_usd: costByModel.get(model) ?? null,
      };
    })
    .sort((a, b) => b.tokens - a.tokens || a.model.localeCompare(b.model));
  return {
    ...costObject(traces, pricingFetchedAt),
    // The stored per-model split adds up to the stored total: coverage is complete.
    cost_attribution_coverage: 'all',
    cost_attribution_source: 'query_time',
    rows,
  };
}

export function expectedRoiTraceSeries(base: Date, w: Window, g: Granularity) {
  const traces = traceFacts(base).filter((t) => inWindow(w)(t.start));
  const dates = buckets(w, g);
  return {
    traces: dates.map((date) => ({ date, value: traces.filter((t) => bucketOf(t.start, g) === date).length })),
    errors: dates.map((date) => ({ date, value: traces.filter((t) => bucketOf(t.start, g) === date && t.spanErrors > 0).length })),
  };
}
