/**
 * The known set of agent runs the preset-view tests send through OTLP ingestion, and the plain
 * JavaScript that computes what each view must answer for them. Timestamps are fixed offsets from
 * a base instant `M` = 00:00 UTC on the 1st of the previous month: far enough back to hold whole
 * buckets on both sides of a month boundary, and recent enough that the 90-day TTL of the event
 * tables keeps every row.
 */
import type { ViewName } from '../../../src/analytics/views/view-params.js';

export const PRICES: Record<string, { input: number; output: number }> = {
  // USD per million tokens, as in test/unit/cost/test-catalog.ts.
  'gpt-test': { input: 2, output: 8 },
  'claude-test': { input: 3, output: 15 },
};

export interface Generation {
  model: string;
  provider: string;
  input: number;
  output: number;
  /** Start offset from the trace start, ms. */
  at: number;
  duration: number;
}

export interface Tool {
  name: string;
  error: boolean;
  at: number;
  duration: number;
}

export interface Run {
  /** Index: ids are derived from it. */
  n: number;
  agent: string;
  /** Day offset from M, and time of day. */
  day: number;
  time: string;
  /** null: the root span is never sent (the trace has no root). */
  root: { status: 'OK' | 'ERROR' | 'UNSET'; duration: number } | null;
  generations: Generation[];
  tools: Tool[];
}

export const RUNS: Run[] = [
  {
    n: 1, agent: 'planner', day: -3, time: '10:00:00', root: { status: 'OK', duration: 2000 },
    generations: [{ model: 'gpt-test', provider: 'openai', input: 1000, output: 200, at: 10, duration: 1000 }],
    tools: [{ name: 'search', error: false, at: 1100, duration: 100 }],
  },
  {
    n: 2, agent: 'planner', day: -3, time: '14:00:00', root: { status: 'ERROR', duration: 3000 },
    generations: [
      { model: 'gpt-test', provider: 'openai', input: 500, output: 100, at: 10, duration: 500 },
      { model: 'claude-test', provider: 'anthropic', input: 300, output: 60, at: 600, duration: 600 },
    ],
    tools: [
      { name: 'search', error: true, at: 1300, duration: 200 },
      { name: 'fetch', error: false, at: 1600, duration: 50 },
    ],
  },
  {
    n: 3, agent: 'writer', day: -1, time: '09:00:00', root: { status: 'UNSET', duration: 1500 },
    generations: [{ model: 'claude-test', provider: 'anthropic', input: 800, output: 400, at: 20, duration: 2000 }],
    tools: [],
  },
  {
    // No root span arrives: root_absent; its only model has no price.
    n: 4, agent: 'writer', day: 0, time: '08:00:00', root: null,
    generations: [{ model: 'mystery-model', provider: '', input: 100, output: 50, at: 0, duration: 250 }],
    tools: [{ name: 'fetch', error: true, at: 300, duration: 30 }],
  },
  {
    n: 5, agent: 'planner', day: 2, time: '12:00:00', root: { status: 'OK', duration: 4000 },
    generations: [{ model: 'gpt-test', provider: 'openai', input: 2000, output: 1000, at: 5, duration: 4000 }],
    tools: [
      { name: 'search', error: false, at: 100, duration: 300 },
      { name: 'search', error: false, at: 500, duration: 500 },
    ],
  },
  {
    n: 6, agent: 'support', day: 9, time: '16:00:00', root: { status: 'ERROR', duration: 800 },
    generations: [{ model: 'gpt-test', provider: 'openai', input: 100, output: 20, at: 1, duration: 200 }],
    tools: [{ name: 'lookup', error: true, at: 300, duration: 80 }],
  },
];

/** 00:00 UTC on the 1st of the month before `now`'s. */
export function baseInstant(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
}

export function dayAt(base: Date, day: number, time = '00:00:00'): Date {
  const [h, m, s] = time.split(':').map(Number);
  return new Date(base.getTime() + day * 86_400_000 + ((h * 60 + m) * 60 + s) * 1000);
}

export function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// ---- OTLP JSON -------------------------------------------------------------------------------

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const traceHex = (run: Run) => `a11ce5${hex(run.n, 26)}`;
const spanHex = (run: Run, i: number) => `${hex(run.n, 8)}${hex(i, 8)}`;
const ns = (date: Date, offsetMs = 0) => (BigInt(date.getTime() + offsetMs) * 1_000_000n).toString();
const attr = (key: string, value: string | number) =>
  typeof value === 'number' ? { key, value: { intValue: String(value) } } : { key, value: { stringValue: value } };
const STATUS = { UNSET: 0, OK: 1, ERROR: 2 } as const;

/**
 * Every preset view with parameters covering the data set's days (day -5 to day 12 of `base`), and
 * the "now" that anchors the views that default to it: what migration tests compare before and after.
 */
export function viewsOverDataset(base: Date) {
  const window = { start: dayAt(base, -5), endExclusive: dayAt(base, 12) };
  const [start, endExclusive] = [iso(window.start), iso(window.endExclusive)];
  const views: [ViewName, Record<string, string>][] = [
    ['general', { hours: String(17 * 24), endExclusive }],
    ['window', { start, endExclusive, granularity: 'week' }],
    ['base', { start, endExclusive }],
    ['agent_scorecard', { start, endExclusive }],
    ['tool_aggregates', { start, endExclusive, granularity: 'week' }],
    ['model_scorecard', { start, endExclusive }],
    ['roi', { granularity: 'month' }],
  ];
  return { window, now: dayAt(base, 12), views };
}

export function runStart(base: Date, run: Run): Date {
  return dayAt(base, run.day, run.time);
}

/** One ExportTraceServiceRequest holding every span of every run. */
export function otlpRequest(base: Date, runs: Run[] = RUNS): unknown {
  const spans: unknown[] = [];
  for (const run of runs) {
    const start = runStart(base, run);
    const rootId = spanHex(run, 1);
    if (run.root) {
      spans.push({
        traceId: traceHex(run), spanId: rootId, name: `${run.agent} run`, kind: 1,
        startTimeUnixNano: ns(start), endTimeUnixNano: ns(start, run.root.duration),
        attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', run.agent)],
        status: { code: STATUS[run.root.status] },
      });
    }
    run.generations.forEach((g, i) => {
      spans.push({
        traceId: traceHex(run), spanId: spanHex(run, 10 + i), parentSpanId: rootId, name: `chat ${g.model}`, kind: 3,
        startTimeUnixNano: ns(start, g.at), endTimeUnixNano: ns(start, g.at + g.duration),
        attributes: [
          attr('gen_ai.operation.name', 'chat'),
          attr('gen_ai.request.model', g.model),
          ...(g.provider ? [attr('gen_ai.provider.name', g.provider)] : []),
          attr('gen_ai.usage.input_tokens', g.input),
          attr('gen_ai.usage.output_tokens', g.output),
          // A rootless run still names its agent on its own spans.
          ...(run.root ? [] : [attr('gen_ai.agent.name', run.agent)]),
        ],
        status: { code: 0 },
      });
    });
    run.tools.forEach((t, i) => {
      spans.push({
        traceId: traceHex(run), spanId: spanHex(run, 100 + i), parentSpanId: rootId, name: `execute_tool ${t.name}`, kind: 1,
        startTimeUnixNano: ns(start, t.at), endTimeUnixNano: ns(start, t.at + t.duration),
        attributes: [
          attr('gen_ai.operation.name', 'execute_tool'),
          attr('gen_ai.tool.name', t.name),
          ...(run.root ? [] : [attr('gen_ai.agent.name', run.agent)]),
        ],
        status: t.error ? { code: 2, message: `${t.name} failed` } : { code: 0 },
      });
    });
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'views-test-service')] },
        scopeSpans: [{ scope: { name: 'analytics-views-test', version: '1' }, spans }],
      },
    ],
  };
}
