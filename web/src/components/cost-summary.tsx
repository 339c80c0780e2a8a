import type { CostLowerBoundReason, CostObject } from '../api/types.js';
import { formatDateTime, formatNumber, formatRate, formatUsd, formatUsdColumn } from '../format.js';

const REASONS: Record<CostLowerBoundReason, string> = {
  unpriced_models: 'some models have no public price',
  prices_unavailable: 'the price catalog was unavailable',
  unbackfilled_traces: 'some traces are not priced yet',
  live_priced_breakdown_truncated: 'the live-priced breakdown was truncated',
  model_rollup_truncated: 'the per-model roll-up was truncated',
};

export function reasonText(reason: string): string {
  return (REASONS as Record<string, string>)[reason] ?? reason;
}

/**
 * The estimated cost, marked as a floor when the API says it is one. In a table column (`column`)
 * at fixed precision so the digits line up, with the full figure on hover.
 */
export function CostValue({ value, lowerBound, column = false }: { value: number | null; lowerBound: boolean; column?: boolean }) {
  return (
    <span class="cost" data-lower-bound={lowerBound ? 'true' : 'false'} data-usd={value ?? ''} title={column ? formatUsd(value) : undefined}>
      {lowerBound && value !== null && <abbr title="Lower bound: the true cost is at least this">≥ </abbr>}
      {column ? formatUsdColumn(value) : formatUsd(value)}
    </span>
  );
}

export function CostDetails({ cost }: { cost: CostObject }) {
  return (
    <div class="cost-details" data-testid="cost-details">
      {cost.cost_lower_bound && (
        <p class="notice" data-testid="cost-lower-bound">
          Lower bound: {cost.cost_lower_bound_reasons.map(reasonText).join('; ') || 'not every token could be priced'}.
        </p>
      )}
      {cost.unpriced_models.length > 0 && (
        <p data-testid="unpriced-models">
          Unpriced models:{' '}
          {cost.unpriced_models.map((m, i) => (
            <>
              {i > 0 && ', '}
              <code key={m}>{m}</code>
            </>
          ))}
        </p>
      )}
      <p class="muted">
        Priced tokens {formatNumber(cost.priced_tokens)} of {formatNumber(cost.total_tokens)} ({formatRate(cost.priced_token_share)}) · source {cost.cost_source}
        {cost.pricing_fetched_at ? ` · prices as of ${formatDateTime(cost.pricing_fetched_at)}` : ''}. Estimates from observed tokens and public list prices, not invoice amounts.
      </p>
    </div>
  );
}
