import { randomUUID } from 'node:crypto';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { formatMs } from '../../../web/src/format.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { expectNoSidewaysScroll, restBody, shownWindow } from './figures.js';
import { seedWithDemo } from './seed.js';
import { buildWebOnce } from './built-web.js';

/**
 * The dashboard as a debugging tool, in a browser whose own zone is America/Los_Angeles: the trace
 * page (tree beside the detail, visible without scrolling), the trace list (whole-row links, sort,
 * count, threads), one time-zone rule with its switch, drill-down with the window kept, shortcuts,
 * auto-refresh, dark mode, the phone layout, and what an unknown project does (nothing).
 */
const ZONE = 'America/Los_Angeles';
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
const requests: string[] = [];

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService();
  projectId = await seedWithDemo(svc);
  browser = await launchBrowser({ timezoneId: ZONE });
  page = await browser.page({ width: 1440, height: 900 });
  page.on('request', (request: Request) => requests.push(request.url()));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const rest = (apiPath: string) => restBody(svc, apiPath);

const rowIds = (p: Page) => p.locator('[data-testid="traces-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')));

/** The instant's wall-clock time in the zone, as the dashboard writes it ("2026-11-28 00:05:09"). */
function wallClock(iso: string, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

describe('the dashboard as a debugging tool', () => {
  it('signs in; an unknown project says so once, offers no "Try again", and asks for no figures', async () => {
    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', svc.adminKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    requests.length = 0;
    await page.goto(`${svc.url}/p/${randomUUID()}`);
    await page.locator('.state-error').waitFor();
    expect(await page.locator('.state-error').innerText()).toMatch(/Not found/);
    expect(await page.locator('.state-error button', { hasText: 'Try again' }).count()).toBe(0);
    // Give the page time to fire anything it would; it must not ask for figures of a project that is not there.
    await page.waitForTimeout(500);
    expect(requests.filter((url) => /\/analytics|\/traces|\/issues/.test(url))).toEqual([]);
  });

  it('shows a failed run with its span tree in view at 1440×900 and the failing span’s stack trace formatted', async () => {
    const failing = (await rest(`/projects/${projectId}/traces?has_error=true&limit=50`)).traces;
    expect(failing.length).toBeGreaterThan(0);
    const traceId = failing[0].id;
    await page.goto(`${svc.url}/p/${projectId}/traces/${traceId}`);
    await page.locator('[data-testid="waterfall"] [data-span-id]').first().waitFor();
    // The tree and its first rows are on screen without scrolling; the detail sits beside it.
    const geometry = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll('[data-testid="waterfall"] .span-button')).slice(0, 3);
      const tree = document.querySelector('[data-testid="span-tree"]')!.getBoundingClientRect();
      const detail = document.querySelector('.trace-detail')!.getBoundingClientRect();
      return {
        scrollY: window.scrollY,
        innerHeight: window.innerHeight,
        rowBottoms: rows.map((r) => r.getBoundingClientRect().bottom),
        treeTop: tree.top,
        treeRight: tree.right,
        detailLeft: detail.left,
        detailTop: detail.top,
      };
    });
    expect(geometry.scrollY).toBe(0);
    expect(geometry.rowBottoms.length).toBeGreaterThan(0);
    for (const bottom of geometry.rowBottoms) expect(bottom).toBeLessThan(geometry.innerHeight);
    expect(geometry.treeTop).toBeLessThan(450);
    expect(geometry.detailLeft).toBeGreaterThanOrEqual(geometry.treeRight);
    expect(Math.abs(geometry.detailTop - geometry.treeTop)).toBeLessThan(5);
    // Ruler and legend; the ruler's last mark is the run's length.
    const bundle = await rest(`/traces/${traceId}?expand=context&project_id=${projectId}&spans_offset=0&spans_limit=100&include_attributes=false&include_events=false`);
    expect(await page.locator('.span-legend').innerText()).toMatch(/Model call[\s\S]*Tool call[\s\S]*Failed span/);
    expect(await page.locator('.span-ruler-mark').first().innerText()).toBe('0 ms');
    await screenshot(page, '20-trace-split-1440', { fullPage: false });

    // Collapse the root: only it stays; expand again: all rows.
    const all = bundle.spans.length;
    expect(await page.locator('[data-testid="waterfall"] [data-span-id]').count()).toBe(all);
    await page.locator('[data-span-index="0"] [data-testid="span-caret"]').click();
    await expect.poll(() => page.locator('[data-testid="waterfall"] [data-span-id]').count()).toBeLessThan(all);
    expect(await page.locator('[data-span-index="0"]').getAttribute('aria-expanded')).toBe('false');
    await page.focus('[data-span-index="0"]');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator('[data-testid="waterfall"] [data-span-id]').count()).toBe(all);

    // The failed tool span: its exception with the stack trace as lines, not JSON with \n.
    const failedIndex = bundle.spans.findIndex((s: { status_code: string; span_class?: string }) => /ERROR/i.test(String(s.status_code)) && s.span_class === 'tool');
    expect(failedIndex).toBeGreaterThan(0);
    await page.click(`[data-span-index="${failedIndex}"]`);
    await page.locator('[data-testid="span-exception"]').waitFor();
    const one = await rest(`/traces/${traceId}?expand=context&project_id=${projectId}&spans_offset=${failedIndex}&spans_limit=1`);
    const exception = one.spans[0].events.find((e: { name: string }) => e.name === 'exception');
    expect(await page.locator('[data-testid="span-exception"] .exception-title').innerText()).toBe(`${exception.attributes['exception.type']}: ${exception.attributes['exception.message']}`);
    const stack = await page.locator('[data-testid="stack-trace"]').innerText();
    expect(stack).toBe(exception.attributes['exception.stacktrace']);
    expect(stack.split('\n').length).toBeGreaterThan(2);
    expect(stack).not.toContain('\\n');
    // Tool arguments indented as JSON, from the span's attribute.
    const args = JSON.parse(one.spans[0].attributes['gen_ai.tool.call.arguments']);
    expect(JSON.parse(await page.locator('[data-testid="span-tool-arguments"]').innerText())).toEqual(args);
    await screenshot(page, '21-trace-failed-span', { fullPage: false });

    // A model call: its prompt as a conversation.
    const generation = bundle.spans.findIndex((s: { span_class?: string }) => s.span_class === 'generation');
    await page.click(`[data-span-index="${generation}"]`);
    await page.locator(`[data-testid="span-detail"][data-span-id="${bundle.spans[generation].otel_span_id}"]`).waitFor();
    const genSpan = (await rest(`/traces/${traceId}?expand=context&project_id=${projectId}&spans_offset=${generation}&spans_limit=1`)).spans[0];
    if (genSpan.attributes['gen_ai.input.messages']) await page.locator('[data-testid="span-prompt-messages"]').waitFor();
    // Back to the run: its input and output.
    await page.click('[data-testid="span-detail-close"]');
    await page.locator('[data-testid="run-detail"]').waitFor();
  });

  it('lists traces with a count, sorts the page, and opens a trace from anywhere on its row', async () => {
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"]').waitFor();
    const listed = (await rest(`/projects/${projectId}/traces?limit=50`)).traces;
    expect(await rowIds(page)).toEqual(listed.map((t: { id: string }) => t.id));
    expect(await page.locator('[data-testid="traces-count"]').innerText()).toContain(`${listed.length} traces on this page`);
    await page.click('[data-testid="traces-table"] button[data-column="duration"]');
    await page.waitForURL(/sort=duration/);
    const duration = (t: { total_duration_ms?: number; duration_ms?: number }) => t.total_duration_ms ?? t.duration_ms ?? 0;
    // Array sort is stable: ties stay in the API's order, as on the page.
    const byDuration = [...listed].sort((a, b) => duration(b) - duration(a));
    await expect.poll(() => rowIds(page)).toEqual(byDuration.map((t) => t.id));
    await page.click('[data-testid="traces-table"] button[data-column="duration"]');
    await page.waitForURL(/dir=asc/);
    const ascending = [...listed].sort((a, b) => duration(a) - duration(b));
    await expect.poll(() => rowIds(page)).toEqual(ascending.map((t) => t.id));
    expect(await page.locator('[data-testid="traces-table"] tbody tr').first().locator('td[data-label="Duration"]').innerText()).toBe(formatMs(duration(ascending[0])));
    // A click on the row's tokens cell opens the trace.
    const first = (await rowIds(page))[0];
    await page.locator('[data-testid="traces-table"] tbody tr').first().locator('td[data-label="Tokens"]').click();
    await page.waitForURL(new RegExp(`/traces/${first}$`));
    await page.locator('[data-testid="waterfall"]').waitFor();
  });

  it('lists a thread’s runs in the order they happened', async () => {
    // A trace of the thread with the most runs.
    const listed: { id: string; thread_id?: string }[] = (await rest(`/projects/${projectId}/traces?limit=50`)).traces;
    const count = (thread?: string) => listed.filter((t) => thread && t.thread_id === thread).length;
    const withThread = [...listed].sort((a, b) => count(b.thread_id) - count(a.thread_id))[0];
    const runs = (await rest(`/projects/${projectId}/traces?limit=200&thread_id=${encodeURIComponent(withThread.thread_id!)}`)).traces;
    expect(runs.length).toBeGreaterThan(1);
    await page.goto(`${svc.url}/p/${projectId}/traces/${withThread.id}`);
    await page.click('[data-testid="trace-thread"]');
    await page.locator('[data-testid="thread-runs"]').waitFor();
    const shown = await page.locator('[data-testid="thread-runs"] > li').evaluateAll((items) => items.map((i) => i.getAttribute('data-trace-id')));
    expect(shown).toEqual(runs.map((t: { id: string }) => t.id).reverse());
    await screenshot(page, '22-thread');
  });

  it('writes every date in UTC, or in the browser’s zone after the switch, and reads date fields the same way', async () => {
    const listed = (await rest(`/projects/${projectId}/traces?limit=50`)).traces;
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"]').waitFor();
    const firstTime = () => page.locator('[data-testid="traces-table"] tbody tr').first().locator('td[data-label="Time"]').innerText();
    const utc = await firstTime();
    expect(utc).toBe(`${wallClock(listed[0].timestamp.replace(' ', 'T') + (listed[0].timestamp.endsWith('Z') ? '' : 'Z'), 'UTC')} UTC`);
    await page.click('[data-testid="zone-toggle"]');
    await expect.poll(firstTime).toMatch(/ P[SD]T$/);
    expect(await firstTime()).toBe(`${wallClock(listed[0].timestamp.replace(' ', 'T') + (listed[0].timestamp.endsWith('Z') ? '' : 'Z'), ZONE)} ${/ (P[SD]T)$/.exec(await firstTime())![1]}`);
    // A date field in local time: 2026-11-20 16:00 in Los Angeles is 2026-11-21 00:00 UTC.
    await page.fill('[data-testid="filter-start"]', '2026-11-20T16:00');
    await page.locator('[data-testid="filter-start"]').dispatchEvent('change');
    await page.waitForURL(/start=2026-11-21T00%3A00%3A00Z/);
    // Chart tables name the zone and write the buckets in it.
    await page.goto(`${svc.url}/p/${projectId}`);
    await page.locator('[data-testid="chart-requests-table"]').waitFor({ state: 'attached' });
    expect(await page.locator('[data-testid="chart-requests-table"] thead th').first().textContent()).toMatch(/Time \(P[SD]T\)/);
    const bucket = (await page.locator('[data-testid="chart-requests-table"] tbody tr').first().getAttribute('data-date'))!;
    expect(await page.locator('[data-testid="chart-requests-table"] tbody tr').first().locator('td').first().textContent()).toBe(
      `${wallClock(bucket, ZONE)} ${/ (P[SD]T)$/.exec(await firstTimeOf(page))![1]}`,
    );
    // Legends name the series and never read "—".
    expect(await page.locator('[data-testid="chart-requests"] .u-legend').innerText()).not.toContain('—');
    await page.click('[data-testid="zone-toggle"]');
    await expect.poll(() => page.locator('[data-testid="chart-requests-table"] thead th').first().textContent()).toBe('Time (UTC)');
  });

  it('drills down from a chart bucket and from the agent table to the traces, with the window kept', async () => {
    await page.goto(`${svc.url}/p/${projectId}?range=24h`);
    await page.locator('[data-testid="chart-requests-table"]').waitFor({ state: 'attached' });
    const window = await shownWindow(page);
    // The value axis starts at 0 (the chart's scale is at least the largest p95 on the latency chart).
    expect(Number(await page.locator('[data-testid="chart-latency"] .chart-canvas').getAttribute('data-y-max'))).toBeGreaterThan(0);
    // Whatever stands above the speed chart's axis (an off-scale p99, an outlying hour) is named under it.
    const yMax = Number(await page.locator('[data-testid="chart-speed"] .chart-canvas').getAttribute('data-y-max'));
    const speeds = await page.locator('[data-testid="chart-speed-table"] td[data-series]').evaluateAll((cells) =>
      cells.map((c) => ({ series: c.getAttribute('data-series')!, value: Number((c.textContent ?? '').replace(/,/g, '')) })),
    );
    const above = [...new Set(speeds.filter((v) => Number.isFinite(v.value) && v.value > yMax).map((v) => v.series))];
    if (above.length > 0) {
      const note = await page.locator('[data-testid="chart-speed-off-scale"]').innerText();
      for (const series of above) expect(note).toContain(`${series} up to`);
    } else expect(await page.locator('[data-testid="chart-speed-off-scale"]').count()).toBe(0);
    await page.click('[data-testid="chart-requests"] summary');
    // The first hour with model calls.
    const bucket = await page.locator('[data-testid="chart-requests-table"]').evaluate((table) => {
      const row = Array.from(table.querySelectorAll('tbody tr[data-date]')).find((r) => r.querySelector('td[data-series="Requests"]')?.textContent?.trim() !== '0');
      return row!.getAttribute('data-date')!;
    });
    await page.locator(`[data-testid="chart-requests-table"] tr[data-date="${bucket}"] a`).click();
    await page.waitForURL(/\/traces\?/);
    const url = new URL(page.url());
    const start = url.searchParams.get('start')!;
    const end = url.searchParams.get('end')!;
    expect(Date.parse(start)).toBeGreaterThanOrEqual(Math.max(Date.parse(bucket), Date.parse(window.start)));
    expect(Date.parse(end)).toBeLessThanOrEqual(Date.parse(window.endExclusive));
    const inBucket = (await rest(`/projects/${projectId}/traces?limit=50&start=${start}&end=${end}`)).traces;
    expect(inBucket.length).toBeGreaterThan(0);
    await expect.poll(() => rowIds(page)).toEqual(inBucket.map((t: { id: string }) => t.id));

    await page.goto(`${svc.url}/p/${projectId}/agents?range=7d`);
    await page.locator('[data-testid="agent-scorecard"]').waitFor();
    const agentWindow = await shownWindow(page);
    const href = (await page.locator('[data-testid="agent-scorecard"] td[data-column="agent"] a').first().getAttribute('href'))!;
    const target = new URL(href, svc.url);
    expect(target.searchParams.get('start')).toBe(agentWindow.start);
    expect(target.searchParams.get('end')).toBe(agentWindow.endExclusive);
  });

  it('answers the keyboard: / focuses the filter, j/k walk the rows, Enter opens, ? lists the shortcuts', async () => {
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"]').waitFor();
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('filter-search');
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await page.keyboard.press('j');
    const ids = await rowIds(page);
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-trace-id'))).toBe(ids[1]);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/traces/${ids[1]}$`));
    await page.keyboard.press('?');
    await page.locator('[data-testid="shortcuts-help"]').waitFor();
    expect(await page.locator('[data-testid="shortcuts-help"]').innerText()).toContain('Focus the filter');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="shortcuts-help"]').count()).toBe(0);
  });

  it('refreshes live and keeps the figures on screen meanwhile', async () => {
    await page.goto(`${svc.url}/p/${projectId}`);
    await page.locator('[data-testid="total-requests-value"]').waitFor();
    await page.locator('[data-testid="freshness"]').waitFor();
    await page.click('[data-testid="live-toggle"]');
    expect(await page.locator('[data-testid="live-toggle"]').getAttribute('aria-pressed')).toBe('true');
    requests.length = 0;
    // Coming back to the tab refreshes at once (the timer does the same every 30 s).
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await expect.poll(() => requests.filter((u) => u.includes('/analytics')).length).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="total-requests-value"]').count()).toBe(1);
    await page.locator('[data-testid="freshness"]').waitFor();
    await page.click('[data-testid="live-toggle"]');
    expect(await page.locator('[data-testid="live-toggle"]').getAttribute('aria-pressed')).toBe('false');
  });

  it('follows the system’s dark mode, with a toggle', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const dark = await background();
    await screenshot(page, '23-traces-dark', { fullPage: false });
    await page.click('[data-testid="theme-toggle"]');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    expect(await background()).not.toBe(dark);
    await page.click('[data-testid="theme-toggle"]');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.evaluate(() => localStorage.removeItem('lookout.theme'));
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('fits a phone: scrolling tabs, tables as cards, the trace stacked', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"]').waitFor();
    await expectNoSidewaysScroll(page);
    const layout = await page.evaluate(() => {
      const tabs = document.querySelector('.tabs')!;
      const row = document.querySelector('[data-testid="traces-table"] tbody tr')!;
      const current = tabs.querySelector('[aria-current="page"]')!.getBoundingClientRect();
      const box = tabs.getBoundingClientRect();
      return {
        tabsScroll: getComputedStyle(tabs).overflowX,
        tabsOverflow: tabs.scrollWidth > tabs.clientWidth,
        currentTabVisible: current.left >= box.left - 1 && current.right <= box.right + 1,
        rowDisplay: getComputedStyle(row).display,
        headHidden: (document.querySelector('[data-testid="traces-table"] thead') as HTMLElement).getBoundingClientRect().height <= 1,
        cellLabel: getComputedStyle(row.querySelector('td[data-label="Duration"]')!, '::before').content,
      };
    });
    expect(layout.tabsScroll).toBe('auto');
    expect(layout.currentTabVisible).toBe(true);
    expect(layout.rowDisplay).toBe('block');
    expect(layout.headHidden).toBe(true);
    expect(layout.cellLabel).toBe('"Duration"');
    await screenshot(page, '24-traces-phone');
    await page.locator('[data-testid="traces-table"] tbody tr').first().locator('a').first().click();
    await page.locator('[data-testid="waterfall"]').waitFor();
    await expectNoSidewaysScroll(page);
    await screenshot(page, '25-trace-phone');
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(browser.consoleErrors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404)/.test(e))).toEqual([]);
  });
});

/** The zone abbreviation the page writes now (from the trace list's or chart's first date). */
async function firstTimeOf(p: Page): Promise<string> {
  return (await p.locator('[data-testid="chart-requests-table"] tbody tr').first().locator('td').first().textContent()) ?? '';
}
