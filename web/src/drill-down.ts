import type { ChartDrill } from './components/time-chart.js';
import type { WindowSelection } from './time-window.js';

/**
 * Links from the analytics pages to the traces behind a figure, keeping the page's window (or the
 * bucket's part of it) as the trace list's start and end. The trace list windows runs by when they
 * started; model and tool figures count calls by when each call happened, so at the window's edges
 * the two can differ (a run that started before the window and called the model inside it is
 * counted in the row, not listed). The pages say so beside their tables (DrillDownNote).
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

/** What the preset views call a model call without a model name; no trace lists it under that name. */
const UNNAMED_MODEL = '(unnamed model)';

/**
 * The runs that called a model or a tool (the trace list's `model` / `tool` filter) within the
 * window a view answered for (its `window` echo), or null for a row the filter cannot name: calls
 * without a model name.
 */
export function callTracesHref(projectId: string, window: { start: string; end_exclusive: string }, filter: 'model' | 'tool', name: string): string | null {
  if (name === '' || (filter === 'model' && name === UNNAMED_MODEL)) return null;
  return tracesHref(projectId, { [filter]: name, start: window.start, end: window.end_exclusive });
}

export function tracesDrill(projectId: string, window: WindowSelection): ChartDrill {
  return { window: { start: window.start, endExclusive: window.endExclusive }, href: (start, end) => tracesHref(projectId, { start, end }) };
}
