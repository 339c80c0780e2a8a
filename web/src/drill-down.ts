import type { ChartDrill } from './components/time-chart.js';
import type { WindowSelection } from './time-window.js';

/**
 * Links from the analytics pages to the traces behind a figure, keeping the page's window (or the
 * bucket's part of it) as the trace list's start and end. Model and tool figures are not linked:
 * they count calls by when each call happened, the list windows runs by when they started, so such
 * a link could list runs that are not behind the figure.
 */
export function tracesHref(projectId: string, filters: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  const text = query.toString();
  return `/p/${projectId}/traces${text ? `?${text}` : ''}`;
}

export function windowTracesHref(projectId: string, window: WindowSelection, filters: Record<string, string | undefined> = {}): string {
  return tracesHref(projectId, { ...filters, start: window.start, end: window.endExclusive });
}

export function tracesDrill(projectId: string, window: WindowSelection): ChartDrill {
  return { window: { start: window.start, endExclusive: window.endExclusive }, href: (start, end) => tracesHref(projectId, { start, end }) };
}
