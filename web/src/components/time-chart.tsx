import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { useAppearance } from '../appearance.js';
import { formatDateTime, parseApiDate } from '../format.js';
import { navigate, setQuery } from '../router.js';
import { isoSecond } from '../time-window.js';
import { zonedTick, zoneMode, zoneName } from '../time-zone.js';
import { Link } from './link.js';
import { bucketRange, yRange } from './chart-scale.js';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /**
   * The series does not stretch the value axis (a p99 next to its p50 and p95): points above the
   * axis are cut off at the top, and a note under the chart names its highest value.
   */
  offScale?: boolean;
}

/** Where a chart's buckets lead: the traces of one bucket, within the page's window. */
export interface ChartDrill {
  window: { start: string; endExclusive: string };
  href: (start: string, endExclusive: string) => string;
}

/** Lines need three points to show a trend; two or fewer are drawn as points only. */
const MIN_POINTS_FOR_LINES = 3;

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#5b6472';
}

/**
 * A time-series chart drawn by uPlot from the API's points as they are, with the same points in a
 * table beneath it (for screen readers and keyboard users, and so a test can compare the figures
 * with the REST answer). The value axis starts at 0; dates follow the dashboard's time zone.
 * With `drill`, a click on a bucket (or its date in the table) opens the traces of that bucket;
 * dragging across the chart zooms the page's window to the dragged range.
 */
export function TimeChart({
  title,
  dates,
  series,
  format,
  testId,
  drill,
  trimOutliers = false,
}: {
  title: string;
  dates: string[];
  series: ChartSeries[];
  format: (value: unknown) => string;
  testId: string;
  drill?: ChartDrill;
  /** Percentile charts: a lone outlier does not stretch the value axis (chart-scale.ts). */
  trimOutliers?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const { theme, zone } = useAppearance();
  const xs = dates.map((d) => (parseApiDate(d)?.getTime() ?? 0) / 1000);
  const bucket = (index: number) => (drill ? bucketRange(xs, index, drill.window) : null);
  const linesDrawn = dates.length >= MIN_POINTS_FOR_LINES;
  const range = yRange(series, { trimOutliers });

  useEffect(() => {
    const element = host.current;
    if (!element || dates.length === 0) return;
    const muted = cssVar('--muted');
    const grid = cssVar('--grid');
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 240),
      height: 200,
      // Labels and colours only: a live legend reads "—" until the pointer is over the chart.
      legend: { show: true, live: false },
      cursor: { drag: { x: Boolean(drill), y: false, setScale: false } },
      tzDate: (ts) => (zoneMode() === 'utc' ? uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') : new Date(ts * 1000)),
      scales: { x: { time: true }, y: { range: () => [0, range.max] } },
      axes: [
        {
          stroke: muted,
          grid: { stroke: grid },
          values: (_u, ticks, _axis, _space, foundIncr) => ticks.map((t) => zonedTick(new Date(t * 1000), foundIncr)),
        },
        {
          stroke: muted,
          grid: { stroke: grid },
          values: (_u, ticks) => ticks.map((t) => format(t)),
          // Wide enough for the longest tick label ("12.5 s"): about 7 px a character plus the tick.
          size: (_u, values) => 18 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
        },
      ],
      series: [
        { label: `Time (${zoneName()})` },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          points: { show: true, size: linesDrawn ? 5 : 8, fill: s.color },
          ...(linesDrawn ? {} : { paths: () => null }),
        })),
      ],
      hooks: drill
        ? {
            setSelect: [
              (u: uPlot) => {
                if (u.select.width < 4) return;
                const from = u.posToVal(u.select.left, 'x');
                const to = u.posToVal(u.select.left + u.select.width, 'x');
                setQuery({ range: 'custom', from: isoSecond(new Date(from * 1000)), to: isoSecond(new Date(to * 1000)) });
              },
            ],
          }
        : {},
    };
    const chart = new uPlot(options, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, element);
    // A click without a drag opens the traces of the bucket under the pointer.
    let downAt: number | null = null;
    const onDown = (event: MouseEvent) => (downAt = event.clientX);
    const onUp = (event: MouseEvent) => {
      const moved = downAt === null ? Infinity : Math.abs(event.clientX - downAt);
      downAt = null;
      const index = chart.cursor.idx;
      const target = moved < 4 && index !== null && index !== undefined ? bucket(index) : null;
      if (target && drill) navigate(drill.href(target.start, target.endExclusive));
    };
    if (drill) {
      chart.over.addEventListener('mousedown', onDown);
      chart.over.addEventListener('mouseup', onUp);
      chart.over.style.cursor = 'pointer';
    }
    const observer = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 240), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [JSON.stringify(dates), JSON.stringify(series), theme, zone, drill?.window.start, drill?.window.endExclusive]);

  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      {dates.length === 0 ? <p class="muted">No points in this window.</p> : <div class="chart-canvas" ref={host} aria-hidden="true" data-y-max={range.max} />}
      {range.clipped.length > 0 && (
        <p class="chart-note muted" data-testid={`${testId}-off-scale`}>
          Above the scale: {range.clipped.map((c) => `${c.label} up to ${format(c.max)}`).join(', ')} (see the data table).
        </p>
      )}
      {dates.length > 0 && !linesDrawn && <p class="chart-note muted">Too few points for a trend: drawn as points.</p>}
      <details class="chart-data">
        <summary>Data table</summary>
        <div class="table-wrap">
          <table class="data-table compact" data-testid={`${testId}-table`}>
            <thead>
              <tr>
                <th scope="col">Time ({zoneName()})</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {dates.map((date, i) => {
                const target = bucket(i);
                return (
                  <tr key={date} data-date={date}>
                    <td class="nowrap">{target && drill ? <Link href={drill.href(target.start, target.endExclusive)}>{formatDateTime(date)}</Link> : formatDateTime(date)}</td>
                    {series.map((s) => (
                      <td class="num" key={s.label} data-series={s.label}>
                        {format(s.values[i])}
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
