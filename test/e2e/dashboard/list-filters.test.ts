/**
 * The trace list's model, release, duration and cost filters with the count of matching traces,
 * the drill-down from a model row and a tool row to that list, and the issue list's agent and trend
 * columns, in Chromium at desktop and phone widths: each filter goes into the URL under the API's
 * parameter name, survives a reload, and the rows and the count shown are the REST answer's; a
 * model's or tool's name opens the list filtered by it with the page's window as start and end; the
 * issue list sorts by agent; at 390 px nothing scrolls sideways.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRuns, type RunSpec } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitFor } from '../../integration/ingest/otlp-client.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { expectNoSidewaysScroll, restBody, shownWindow, tableCells } from './figures.js';
import { buildWebOnce } from './built-web.js';

let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
/** The OpenTelemetry trace id of each of RUNS, in order. */
let sentIds: string[];

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
const RUNS: RunSpec[] = [
  { start: minutesAgo(9), agent: 'support', release: '1.0.0', generations: [{ model: 'gpt-4o', input: 900, output: 80, ms: 300 }] },
  { start: minutesAgo(8), agent: 'support', release: '2.0.0', generations: [{ model: 'gpt-4o-mini', input: 500, output: 40, ms: 1800 }], tools: [{ name: 'refund_lookup', error: true }] },
  { start: minutesAgo(7), agent: 'billing', release: '2.0.0', generations: [{ model: 'gpt-4o', input: 1200, output: 90, ms: 2500 }], tools: [{ name: 'refund_lookup', error: true }] },
  { start: minutesAgo(6), agent: 'billing', release: '2.0.0', generations: [{ model: 'gpt-4o-mini', input: 300, output: 20, ms: 400 }], tools: [{ name: 'send_invoice', error: true }] },
  { start: minutesAgo(5), agent: 'support', release: '2.1.0', generations: [{ model: 'gpt-4o', input: 700, output: 60, ms: 900 }] },
];

async function signIn() {
  await page.goto(`${svc.url}/`);
  await page.fill('#api-key', svc.adminKey);
  await page.press('#api-key', 'Enter');
  await page.locator('[data-testid="project-list"]').waitFor();
}

const traceRows = () => page.locator('[data-testid="traces-table"] tbody tr');

/** The trace ids the table shows, in order. */
async function shownTraceIds(): Promise<string[]> {
  return traceRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id') ?? ''));
}

/** Waits until the table shows exactly the traces (and the count) the REST list answers for `params`. */
async function expectRestList(params: string) {
  const rest = await restBody(svc, `/projects/${projectId}/traces?limit=50&include_total=true&${params}`);
  await waitFor(async () => (JSON.stringify(await shownTraceIds()) === JSON.stringify(rest.traces.map((t: { id: string }) => t.id)) ? true : undefined), 15_000, `the rows of ${params}`);
  await waitFor(async () => ((await page.locator('[data-testid="traces-total"]').innerText()).startsWith(`${rest.total} trace`) ? true : undefined), 15_000, `the total ${rest.total}`);
  return rest;
}

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService({ TRACE_SETTLE_MS: '100' });
  projectId = (await svc.newProject('list filters')).id;
  sentIds = await sendRuns(svc.url, svc.adminKey, projectId, RUNS);
  await waitFor(async () => {
    const traces = (await svc.call('GET', `/projects/${projectId}/traces`)).body.traces?.length;
    const issues = (await svc.call('GET', `/projects/${projectId}/issues`)).body.issues as { occurrence_count: number }[] | undefined;
    return traces === RUNS.length && issues?.reduce((n, i) => n + i.occurrence_count, 0) === 3 ? true : undefined;
  }, 60_000, 'the runs processed and their issues opened');
  browser = await launchBrowser();
  page = await browser.page();
  await signIn();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe('trace list filters and count', () => {
  it('filters by model, release, duration and cost through the URL, with the count of matching traces', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    const all = await expectRestList('');
    expect(all.total).toBe(RUNS.length);
    expect(await page.locator('[data-testid="traces-total"]').innerText()).toContain('5 traces in all');

    await page.fill('[data-testid="filter-model"]', 'gpt-4o-mini');
    await page.press('[data-testid="filter-model"]', 'Enter');
    await page.waitForURL(/[?&]model=gpt-4o-mini/);
    const mini = await expectRestList('model=gpt-4o-mini');
    expect(mini.total).toBe(2);
    expect(await page.locator('[data-testid="traces-total"]').innerText()).toContain('2 traces match');

    await page.fill('[data-testid="filter-release"]', '2.0.0');
    await page.press('[data-testid="filter-release"]', 'Enter');
    await page.waitForURL(/[?&]release=2\.0\.0/);
    await expectRestList('model=gpt-4o-mini&release=2.0.0');

    // Duration from 1 s: the long runs only; it survives a reload.
    await page.fill('[data-testid="filter-min_duration_ms"]', '1000');
    await page.press('[data-testid="filter-min_duration_ms"]', 'Enter');
    await page.waitForURL(/[?&]min_duration_ms=1000/);
    const long = await expectRestList('model=gpt-4o-mini&release=2.0.0&min_duration_ms=1000');
    expect(long.total).toBe(1);
    await page.reload();
    await expectRestList('model=gpt-4o-mini&release=2.0.0&min_duration_ms=1000');
    expect(await page.inputValue('[data-testid="filter-model"]')).toBe('gpt-4o-mini');
    expect(await page.inputValue('[data-testid="filter-min_duration_ms"]')).toBe('1000');
    await screenshot(page, 'trace-list-filters');

    // Cost: the API's own figure as the upper bound keeps that trace (inclusive).
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expectRestList('');
    const cheapest = Math.min(...all.traces.map((t: { estimated_cost_usd: number | null }) => t.estimated_cost_usd ?? Infinity));
    await page.fill('[data-testid="filter-max_cost_usd"]', String(cheapest));
    await page.press('[data-testid="filter-max_cost_usd"]', 'Enter');
    await page.waitForURL(/[?&]max_cost_usd=/);
    const cheap = await expectRestList(`max_cost_usd=${cheapest}`);
    expect(cheap.total).toBeGreaterThanOrEqual(1);
    expect(cheap.total).toBeLessThan(RUNS.length);
    expect(await page.inputValue('[data-testid="filter-model"]')).toBe('');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expectRestList('');
    expect(page.url()).not.toContain('max_cost_usd');
  });

  it('fits a phone: the filters wrap and nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.url}/p/${projectId}/traces?model=gpt-4o&min_duration_ms=100&max_cost_usd=1`);
    await expectRestList('model=gpt-4o&min_duration_ms=100&max_cost_usd=1');
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'trace-list-filters-phone', { fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});

describe('drill-down from model and tool rows', () => {
  /** Lookout's ids of the runs of RUNS that `keep`, sorted. */
  async function runIds(keep: (run: RunSpec) => boolean): Promise<string[]> {
    const listed = (await restBody(svc, `/projects/${projectId}/traces?limit=50`)).traces as { id: string; otel_trace_id: string }[];
    return sentIds.filter((_, i) => keep(RUNS[i])).map((otel) => listed.find((t) => t.otel_trace_id === otel)!.id).sort();
  }

  /** Clicks the name in the row and checks the list it lands on: the filter and the page's window in the URL, the REST list shown. */
  async function drill(tableId: string, column: string, name: string, filter: 'model' | 'tool') {
    const window = await shownWindow(page);
    await page.locator(`[data-testid="${tableId}"] tr[data-row-key="${name}"] td[data-column="${column}"] a`).click();
    await page.waitForURL(/\/traces\?/);
    const url = new URL(page.url());
    expect(url.pathname).toBe(`/p/${projectId}/traces`);
    expect(url.searchParams.get(filter)).toBe(name);
    expect(url.searchParams.get('start')).toBe(window.start);
    expect(url.searchParams.get('end')).toBe(window.endExclusive);
    const listed = await expectRestList(`${filter}=${name}&start=${window.start}&end=${window.endExclusive}`);
    expect(await page.inputValue(`[data-testid="filter-${filter}"]`)).toBe(name);
    return listed as { total: number; traces: { id: string }[] };
  }

  it('a model row and a tool row open the trace list filtered by them, with the window kept', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${svc.url}/p/${projectId}/models?range=7d`);
    await page.locator('[data-testid="model-scorecard"]').waitFor();
    expect(await page.locator('[data-testid="drill-down-note"]').innerText()).toContain('started in this window');
    const modelTraces = (await tableCells(page, 'model-scorecard'))['gpt-4o-mini'].traces;
    const mini = await drill('model-scorecard', 'model', 'gpt-4o-mini', 'model');
    expect(mini.traces.map((t) => t.id).sort()).toEqual(await runIds((run) => run.generations.some((g) => g.model === 'gpt-4o-mini')));
    expect(mini.total).toBe(2);
    // The scorecard's Traces counts the runs that started in the window and called the model: what the list counts.
    expect(modelTraces).toBe(String(mini.total));
    await screenshot(page, 'drill-down-model');

    await page.goto(`${svc.url}/p/${projectId}/tools?range=24h`);
    await page.locator('[data-testid="tool-aggregates"]').waitFor();
    const lookups = await drill('tool-aggregates', 'tool', 'refund_lookup', 'tool');
    expect(lookups.traces.map((t) => t.id).sort()).toEqual(await runIds((run) => (run.tools ?? []).some((t) => t.name === 'refund_lookup')));
    expect(lookups.total).toBe(2);
    await screenshot(page, 'drill-down-tool');

    // The Overview's top models link the same way; back returns to the page drilled from.
    await page.goto(`${svc.url}/p/${projectId}?range=24h`);
    await page.locator('[data-testid="top-models"]').waitFor();
    const gpt4o = await drill('top-models', 'model', 'gpt-4o', 'model');
    expect(gpt4o.traces.map((t) => t.id).sort()).toEqual(await runIds((run) => run.generations.some((g) => g.model === 'gpt-4o')));
    await page.goBack();
    await page.locator('[data-testid="top-models"]').waitFor();

    // On a phone the tables become cards and the links still fit.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.url}/p/${projectId}/tools?range=24h`);
    await page.locator('[data-testid="tool-aggregates"]').waitFor();
    await expectNoSidewaysScroll(page);
    await drill('tool-aggregates', 'tool', 'send_invoice', 'tool');
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(browser.consoleErrors).toEqual([]);
  });
});

describe('issue triage columns', () => {
  const issueRows = () => page.locator('[data-testid="issues-table"] tbody tr');
  const agentsShown = () => issueRows().evaluateAll((rows) => rows.map((r) => r.querySelector('.issue-agents')?.textContent ?? ''));

  it('shows each issue\'s agents and trend as the API answers them, and sorts by agent', async () => {
    await page.goto(`${svc.url}/p/${projectId}/issues`);
    const rest = await restBody(svc, `/projects/${projectId}/issues?status=open,in_progress&limit=50&include_agents=true&include_trend=true`);
    expect(rest.issues).toHaveLength(2);
    await waitFor(async () => ((await issueRows().count()) === 2 ? true : undefined), 15_000, 'two issues');
    const byAgents = (list: { agent_names: string[] }[]) => list.map((i) => i.agent_names.join(', ')).sort();
    expect((await agentsShown()).sort()).toEqual(byAgents(rest.issues));
    expect(byAgents(rest.issues)).toEqual(['billing', 'billing, support']);
    // The sparkline's total is the API's trend added up.
    const totals = await page.locator('[data-testid="sparkline"]').evaluateAll((nodes) => nodes.map((n) => Number(n.getAttribute('data-total'))));
    expect(totals.sort()).toEqual(rest.issues.map((i: { occurrence_trend: { count: number }[] }) => i.occurrence_trend.reduce((n, p) => n + p.count, 0)).sort());

    const agentHeader = page.locator('[data-testid="issues-table"] thead button[data-column="agents"]');
    await agentHeader.click();
    await page.waitForURL(/[?&]sort=agents/);
    await expect.poll(agentsShown).toEqual(['billing', 'billing, support']);
    await agentHeader.click();
    await page.waitForURL(/[?&]dir=desc/);
    await expect.poll(agentsShown).toEqual(['billing, support', 'billing']);
    await screenshot(page, 'issue-triage-columns');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await waitFor(async () => ((await issueRows().count()) === 2 ? true : undefined), 15_000, 'two issues on a phone');
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'issue-triage-columns-phone', { fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(browser.consoleErrors).toEqual([]);
  });
});
