import { formatCount, plural } from '../format.js';

/**
 * Daily counts as a row of bars (an inline SVG, no chart library): each bar's height is its day's
 * count against the highest day of the row, so the shape reads at a glance; the total and every
 * day's figure are in the accessible label and the bars' tooltips.
 */
export function Sparkline({ points, label }: { points: { date: string; count: number }[]; label: string }) {
  const total = points.reduce((sum, p) => sum + p.count, 0);
  const top = Math.max(1, ...points.map((p) => p.count));
  const width = points.length * 5;
  const height = 18;
  return (
    <span class="sparkline" data-testid="sparkline" data-total={total}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${plural(total, 'occurrence')} ${label}`}>
        {points.map((p, i) => {
          const h = p.count === 0 ? 1 : Math.max(2, Math.round((p.count / top) * height));
          return (
            <rect key={p.date} x={i * 5} y={height - h} width={4} height={h} class={p.count === 0 ? 'spark-zero' : 'spark-bar'}>
              <title>{`${p.date}: ${formatCount(p.count)}`}</title>
            </rect>
          );
        })}
      </svg>
      <span class="spark-total">{formatCount(total)}</span>
    </span>
  );
}
