/**
 * Baseline and "rising above it" (docs/monitors.md "Baseline and triggering").
 *
 * The unit is a tool call for tool monitors and a trace for signal monitors. Learning records the
 * share of units that matched. Once active, the monitor looks at its latest window of observed
 * traces: with `calls` units there it expects `rate × calls` matches. Matches count as rising when
 * they reach MIN_MATCHES and exceed that expectation by three standard deviations of a Poisson
 * count (3·√expected) — so a handful of failures on a tool that never failed triggers, while the
 * usual noise of a tool that fails 2% of the time does not.
 */
export const MIN_MATCHES = 3;

export interface Baseline {
  traces: number;
  calls: number;
  matches: number;
  rate: number;
  recorded_at: string;
}

export interface WindowCounts {
  traces: number;
  calls: number;
  matches: number;
}

export function recordBaseline(totals: WindowCounts, at: Date): Baseline {
  return {
    traces: totals.traces,
    calls: totals.calls,
    matches: totals.matches,
    rate: totals.calls > 0 ? totals.matches / totals.calls : 0,
    recorded_at: at.toISOString(),
  };
}

/** The number of matches in a window that counts as rising above the baseline. */
export function triggerThreshold(baseline: Pick<Baseline, 'rate'>, windowCalls: number): number {
  const expected = baseline.rate * windowCalls;
  return Math.max(MIN_MATCHES, Math.floor(expected + 3 * Math.sqrt(expected)) + 1);
}

export function exceedsBaseline(baseline: Pick<Baseline, 'rate'>, window: WindowCounts): boolean {
  return window.matches >= triggerThreshold(baseline, window.calls);
}
