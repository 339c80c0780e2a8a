import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatDateTime, parseApiDate } from '../format.js';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/**
 * A time-series chart drawn by uPlot from the API's points as they are, with the same points in a
 * table beneath it (for screen readers and keyboard users, and so a test can compare the figures
 * with the REST answer).
 */
export function TimeChart({
  title,
  dates,
  series,
  format,
  testId,
}: {
  title: string;
  dates: string[];
  series: ChartSeries[];
  format: (value: unknown) => string;
  testId: string;
}) {
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = host.current;
    if (!element || dates.length === 0) return;
    const xs = dates.map((d) => (parseApiDate(d)?.getTime() ?? 0) / 1000);
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 240),
      height: 200,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [
        { stroke: '#5b6472', grid: { stroke: '#eceef2' } },
        {
          stroke: '#5b6472',
          grid: { stroke: '#eceef2' },
          values: (_u, ticks) => ticks.map((t) => format(t)),
          // Wide enough for the longest tick label ("12,500 ms"): about 7 px a character plus the tick.
          size: (_u, values) => 18 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
        },
      ],
      series: [
        { label: 'Time', value: (_u, v) => (v === null ? '—' : formatDateTime(new Date(v * 1000).toISOString())) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          points: { size: 6 },
          value: (_u: uPlot, v: number | null) => format(v),
        })),
      ],
    };
    const chart = new uPlot(options, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, element);
    const observer = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 240), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [JSON.stringify(dates), JSON.stringify(series)]);

  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      {dates.length === 0 ? <p class="muted">No points in this window.</p> : <div class="chart-canvas" ref={host} aria-hidden="true" />}
      <details class="chart-data">
        <summary>Data table</summary>
        <div class="table-wrap">
          <table class="data-table compact" data-testid={`${testId}-table`}>
            <thead>
              <tr>
                <th scope="col">Date</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {dates.map((date, i) => (
                <tr key={date} data-date={date}>
                  <td>{date}</td>
                  {series.map((s) => (
                    <td class="num" key={s.label} data-series={s.label}>
                      {format(s.values[i])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
