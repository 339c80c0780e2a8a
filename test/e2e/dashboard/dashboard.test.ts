import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { formatCount, formatMs, formatNumber, formatRate, formatUsd, formatUsdColumn } from '../../../web/src/format.js';
import { hourlyQueries, hoursOf } from '../../../web/src/api/hourly-series.js';
import { readWindow } from '../../../web/src/time-window.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { chartTable, expectNoSidewaysScroll, rowOrder, shownWindow, statText, tableCells } from './figures.js';
import { sendLongTrace } from './long-trace.js';
import { seedWithDemo } from './seed.js';
import { buildWebOnce } from './built-web.js';

// One service seeded by the demo, one browser; the tests run in order as one person's visit.
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
let emptyProjectId: string;
let longProjectId: string;

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService();
  projectId = await seedWithDemo(svc);
  emptyProjectId = (await svc.newProject('empty project')).id;
  longProjectId = (await svc.newProject('long traces')).id;
  await sendLongTrace(svc.url, svc.adminKey, longProjectId, 230);
  browser = await launchBrowser();
  page = await browser.page();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function rest(apiPath: string) {
  const res = await svc.call('GET', apiPath);
  expect(res.status, `${apiPath}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

async function post(apiPath: string, body: unknown) {
  const res = await svc.call('POST', apiPath, { body });
  expect(res.status, `${apiPath}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** Issue ids by last_seen_at, newest first (ties in the API's order): the issue list's default sort. */
function byLastSeen(issues: { id: string; last_seen_at: string | null }[]): string[] {
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort((a, b) => (b.issue.last_seen_at ?? '').localeCompare(a.issue.last_seen_at ?? '') || a.i - b.i)
    .map(({ issue }) => issue.id);
}

async function signIn(target: Page, key: string) {
  await target.fill('#api-key', key);
  await target.press('#api-key', 'Enter');
}

describe('dashboard in a browser', () => {
  it('says so when the key is wrong, and signs in with a good one', async () => {
    await page.goto(`${svc.url}/`);
    expect(await page.locator('h1').innerText()).toBe('Lookout');
    await signIn(page, 'lk_not_a_real_key');
    const error = page.locator('[data-testid="sign-in-error"]');
    await error.waitFor();
    expect(await error.innerText()).toContain('not accepted');
    await screenshot(page, '01-sign-in-bad-key');

    const ingestKey = await svc.newKey('ingest');
    await signIn(page, ingestKey);
    await page.locator('[data-testid="sign-in-error"]', { hasText: 'cannot read' }).waitFor();

    await signIn(page, svc.adminKey);
    await page.locator('[data-testid="project-list"]').waitFor();
    const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('lookout.apiKey'), local: localStorage.length, cookie: document.cookie }));
    expect(stored).toEqual({ session: svc.adminKey, local: 0, cookie: '' });
    await screenshot(page, '02-projects');
  });

  it('lists exactly the projects the API lists', async () => {
    const { projects } = await rest('/projects');
    const shown = await page.locator('[data-testid="project-list"] a[data-project-id]').evaluateAll((links) => links.map((a) => [a.getAttribute('data-project-id'), a.textContent]));
    expect(shown).toEqual(projects.map((p: { id: string; name: string }) => [p.id, p.name]));
  });

  it('shows the general view of the demo project with the REST figures', async () => {
    await page.click(`a[data-project-id="${projectId}"]`);
    await page.locator('[data-testid="total-requests-value"]').waitFor();
    await page.locator('[data-testid="runs-traces-value"]').waitFor();
    const window = await shownWindow(page);
    const general = await rest(`/projects/${projectId}/analytics?view=general&hours=${window.hours}&endExclusive=${window.endExclusive}&granularity=day`);
    expect(general.totals.requests).toBeGreaterThan(0);
    expect(await statText(page, 'total-requests')).toBe(formatCount(general.totals.requests));
    expect(await statText(page, 'total-errors')).toBe(formatCount(general.totals.errors));
    expect(await statText(page, 'total-speed-p50')).toBe(formatNumber(general.totals.speed_percentiles.p50));
    expect(await statText(page, 'total-speed-p99')).toBe(formatNumber(general.totals.speed_percentiles.p99));
    expect(await statText(page, 'total-prompt-tokens')).toBe(formatCount(general.totals.prompt_tokens));
    expect(await statText(page, 'total-completion-tokens')).toBe(formatCount(general.totals.completion_tokens));
    expect(await statText(page, 'total-cost')).toBe(`${general.totals.cost_lower_bound && general.totals.estimated_cost_usd !== null ? '≥ ' : ''}${formatUsd(general.totals.estimated_cost_usd)}`);
    if (general.totals.unpriced_models.length > 0) {
      const named = await page.locator('[data-testid="unpriced-models"]').innerText();
      for (const model of general.totals.unpriced_models) expect(named).toContain(model);
    }

    // 24 h defaults to hour buckets: every hour of the window, from the query DSL (the views have
    // no hour buckets), the same figures as the DSL answers; hours without calls show 0.
    expect(new URL(page.url()).searchParams.get('granularity') ?? 'hour').toBe('hour');
    expect(await page.locator('.window-picker select').inputValue()).toBe('hour');
    const selection = { ...readWindow(new URLSearchParams('range=24h')), start: window.start, endExclusive: window.endExclusive, hours: 24 };
    const hours = hoursOf(selection);
    expect(hours.length).toBeGreaterThanOrEqual(24);
    const bodies = hourlyQueries(selection);
    const calls = await post(`/projects/${projectId}/analytics/query`, bodies.generations);
    const byHour = new Map(calls.rows.map((r: { bucket: string }) => [r.bucket, r]));
    const requests = await chartTable(page, 'chart-requests');
    expect(Object.keys(requests)).toEqual(hours);
    for (const hour of hours) {
      const row = byHour.get(hour) as Record<string, number> | undefined;
      expect(requests[hour].Requests, hour).toBe(formatCount(row?.requests ?? 0));
      expect(requests[hour].Errors, hour).toBe(formatCount(row?.errors ?? 0));
    }
    // Independent check: the hours add up to the general view's totals for the same window.
    expect(calls.rows.reduce((n: number, r: { requests: number }) => n + Number(r.requests), 0)).toBe(general.totals.requests);
    expect(calls.rows.reduce((n: number, r: { prompt_tokens: number }) => n + Number(r.prompt_tokens), 0)).toBe(general.totals.prompt_tokens);
    const speed = await chartTable(page, 'chart-speed');
    for (const row of calls.rows) expect(speed[row.bucket].p95).toBe(formatNumber(row.speed_p95));
    expect(await page.locator('[data-testid="chart-requests"] canvas').count()).toBeGreaterThan(0);
    // Each error figure says what it counts.
    expect(await page.locator('[data-testid="total-errors"] dt').innerText()).toMatch(/Failed model calls\s+model calls, not runs/);
    expect(await page.locator('[data-testid="runs-failed"] dt').innerText()).toMatch(/Failed runs\s+root span failed/);

    const runs = await rest(`/projects/${projectId}/analytics?view=window&start=${window.start}&endExclusive=${window.endExclusive}&granularity=day`);
    expect(await statText(page, 'runs-traces')).toBe(formatCount(runs.totals.traces));
    expect(await statText(page, 'runs-failed')).toBe(formatCount(runs.totals.failed_runs));
    expect(await statText(page, 'runs-error-rate')).toBe(formatRate(runs.totals.error_rate));
    expect(await statText(page, 'runs-p50')).toBe(formatMs(runs.totals.p50));
    const runHours = await post(`/projects/${projectId}/analytics/query`, bodies.runs);
    const latency = await chartTable(page, 'chart-latency');
    expect(Object.keys(latency)).toEqual(hours);
    for (const row of runHours.rows) expect(latency[row.bucket].p50).toBe(formatMs(row.latency_p50));
    await screenshot(page, '03-overview-24h');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page);
    await screenshot(page, '03-overview-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('changes the window and granularity from the picker', async () => {
    await page.click('[data-range="7d"]');
    await page.waitForURL(/range=7d/);
    // Hour buckets only up to 48 h: a week offers day, week and month.
    await expect.poll(() => page.locator('.window-picker select option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(['day', 'week', 'month']);
    await page.selectOption('.window-picker select', 'week');
    await page.waitForURL(/granularity=week/);
    await page.locator('[data-testid="total-requests-value"]').waitFor();
    const window = await shownWindow(page);
    expect(window.hours).toBe('168');
    const general = await rest(`/projects/${projectId}/analytics?view=general&hours=168&endExclusive=${window.endExclusive}&granularity=week`);
    await expect.poll(() => statText(page, 'total-requests')).toBe(formatCount(general.totals.requests));
    await expect.poll(async () => Object.keys(await chartTable(page, 'chart-requests'))).toEqual(general.requests.map((p: { date: string }) => p.date));
    const weekly = await chartTable(page, 'chart-requests');
    for (const point of general.requests) expect(weekly[point.date].Requests).toBe(formatCount(point.value));
    for (const point of general.errors) expect(weekly[point.date].Errors).toBe(formatCount(point.value));
    await screenshot(page, '04-overview-7d-week');

    // Custom: a 36-hour window ending at the next whole hour, typed into the two datetime fields.
    const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
    const start = new Date(end.getTime() - 36 * 3_600_000);
    // The dashboard reads date fields in its time zone, UTC unless switched.
    const local = (d: Date) => d.toISOString().slice(0, 16);
    await page.click('[data-range="custom"]');
    await page.fill('.custom-window input >> nth=0', local(start));
    await page.fill('.custom-window input >> nth=1', local(end));
    await page.click('.custom-window button[type="submit"]');
    await page.waitForURL(/range=custom/);
    await expect.poll(async () => (await shownWindow(page)).endExclusive).toBe(end.toISOString().replace('.000Z', 'Z'));
    const custom = await shownWindow(page);
    expect(custom.start).toBe(start.toISOString().replace('.000Z', 'Z'));
    const customGeneral = await rest(`/projects/${projectId}/analytics?view=general&hours=36&endExclusive=${custom.endExclusive}&granularity=week`);
    await expect.poll(() => statText(page, 'total-requests')).toBe(formatCount(customGeneral.totals.requests));
    const customRuns = await rest(`/projects/${projectId}/analytics?view=window&start=${custom.start}&endExclusive=${custom.endExclusive}&granularity=week`);
    await expect.poll(() => statText(page, 'runs-traces')).toBe(formatCount(customRuns.totals.traces));
  });

  it('shows the agent scorecard as the API answers it, sortable from the keyboard', async () => {
    await page.click('[data-tab="agents"]');
    await page.locator('[data-testid="agent-scorecard"]').waitFor();
    const window = await shownWindow(page);
    const view = await rest(`/projects/${projectId}/analytics?view=agent_scorecard&start=${window.start}&endExclusive=${window.endExclusive}`);
    expect(view.rows.length).toBeGreaterThan(0);
    const cells = await tableCells(page, 'agent-scorecard');
    expect(Object.keys(cells).sort()).toEqual(view.rows.map((r: { agent: string }) => r.agent).sort());
    for (const row of view.rows) {
      expect(cells[row.agent].traces).toBe(formatCount(row.traces));
      expect(cells[row.agent].p95).toBe(formatMs(row.p95));
      expect(cells[row.agent].error_rate).toBe(formatRate(row.error_rate));
      expect(cells[row.agent].tokens).toBe(formatCount(row.tokens));
      // Costs in a column at fixed precision, the full figure on hover.
      expect(cells[row.agent].cost).toBe(`${row.cost_is_lower_bound && row.cost !== null ? '≥ ' : ''}${formatUsdColumn(row.cost)}`);
    }
    const agentHeaders = await page.locator('[data-testid="agent-scorecard"] thead th').allInnerTexts();
    expect(agentHeaders.map((h) => h.replace(/[▲▼]/g, '').trim())).toContain('Failed runs %');
    // Keyboard: focus the "Agent" header button and press Enter to sort by name, again to reverse.
    await page.focus('[data-testid="agent-scorecard"] button[data-column="agent"]');
    await page.keyboard.press('Enter');
    const names = view.rows.map((r: { agent: string }) => r.agent);
    expect(await rowOrder(page, 'agent-scorecard')).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    await page.keyboard.press('Enter');
    expect(await rowOrder(page, 'agent-scorecard')).toEqual([...names].sort((a, b) => b.localeCompare(a)));
    await screenshot(page, '05-agents');
  });

  it('shows the model scorecard and tool aggregates as the API answers them', async () => {
    await page.click('[data-tab="models"]');
    await page.locator('[data-testid="model-scorecard"]').waitFor();
    let window = await shownWindow(page);
    const end = new Date(Date.parse(window.endExclusive) - 1000).toISOString().replace('.000Z', 'Z');
    const models = await rest(`/projects/${projectId}/analytics?view=model_scorecard&start=${window.start}&end=${end}`);
    const modelCells = await tableCells(page, 'model-scorecard');
    expect(Object.keys(modelCells).sort()).toEqual(models.rows.map((r: { model: string }) => r.model).sort());
    // Every priced model has its cost, and the rows add up to the total.
    expect(models.cost_attribution_coverage).toBe('all');
    for (const row of models.rows) {
      expect(modelCells[row.model].tokens).toBe(formatCount(row.tokens));
      if (row.priced) expect(row.estimated_cost_usd).not.toBeNull();
      expect(modelCells[row.model].estimated_cost_usd).toBe(formatUsdColumn(row.estimated_cost_usd));
      expect(modelCells[row.model].estimated_cost_usd).toMatch(/^\$/);
    }
    expect(await page.locator('text=the rows add up to the total').count()).toBe(1);
    await screenshot(page, '06-models');

    await page.click('[data-tab="tools"]');
    await page.locator('[data-testid="tool-aggregates"]').waitFor();
    window = await shownWindow(page);
    const tools = await rest(`/projects/${projectId}/analytics?view=tool_aggregates&start=${window.start}&endExclusive=${window.endExclusive}&granularity=${new URL(page.url()).searchParams.get('granularity') ?? 'day'}`);
    const toolCells = await tableCells(page, 'tool-aggregates');
    expect(Object.keys(toolCells).sort()).toEqual(tools.rows.map((r: { tool: string }) => r.tool).sort());
    for (const row of tools.rows) {
      expect(toolCells[row.tool].calls).toBe(formatCount(row.calls));
      expect(toolCells[row.tool].errors).toBe(formatCount(row.errors));
      expect(toolCells[row.tool].p50).toBe(formatMs(row.p50));
    }
    // Error columns say what they count: failed calls of the tool, not failed runs.
    const toolHeaders = await page.locator('[data-testid="tool-aggregates"] thead th').allInnerTexts();
    expect(toolHeaders.map((h) => h.replace(/[▲▼]/g, '').trim())).toEqual(expect.arrayContaining(['Failed calls', 'Failed calls %']));
    await screenshot(page, '07-tools');
  });

  it('lists traces with filters, as the traces API lists them', async () => {
    await page.click('[data-tab="traces"]');
    await page.locator('[data-testid="traces-table"]').waitFor();
    const all = await rest(`/projects/${projectId}/traces?limit=50`);
    const shown = await page.locator('[data-testid="traces-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')));
    expect(shown).toEqual(all.traces.map((t: { id: string }) => t.id));
    await screenshot(page, '08-traces');

    await page.selectOption('[data-testid="filter-error"]', 'true');
    await page.waitForURL(/has_error=true/);
    const failing = await rest(`/projects/${projectId}/traces?limit=50&has_error=true`);
    expect(failing.traces.length).toBeGreaterThan(0);
    await expect
      .poll(() => page.locator('[data-testid="traces-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id'))))
      .toEqual(failing.traces.map((t: { id: string }) => t.id));
    await screenshot(page, '09-traces-with-errors');
  });

  it('opens a trace: waterfall from the context bundle, a span’s attributes on demand', async () => {
    const traceId = await page.locator('[data-testid="traces-table"] tbody tr').first().getAttribute('data-trace-id');
    await page.locator('[data-testid="traces-table"] tbody tr').first().locator('a.row-main-link').click();
    await page.locator('[data-testid="waterfall"]').waitFor();
    const detail = await rest(`/traces/${traceId}`);
    const bundle = await rest(`/traces/${traceId}?expand=context&project_id=${projectId}&spans_offset=0&spans_limit=100&include_attributes=false&include_events=false`);
    expect(await statText(page, 'trace-duration')).toBe(formatMs(detail.total_duration_ms));
    expect(await statText(page, 'trace-tokens')).toBe(formatCount(detail.stats.total_tokens));
    // The trace's cost, as the detail payload carries it, with its basis.
    expect(detail.estimated_cost_basis).toBe('stored');
    expect(await statText(page, 'trace-cost')).toBe(formatUsd(detail.estimated_cost_usd));
    expect(await page.locator('[data-testid="trace-cost-note"]').innerText()).toBe('every model priced');
    const listed = (await rest(`/projects/${projectId}/traces?limit=50`)).traces.find((t: { id: string }) => t.id === traceId);
    expect(listed.estimated_cost_usd).toBe(detail.estimated_cost_usd);
    // Agent input and output as a conversation: role, text, tool calls; the raw JSON one click away.
    const input = page.locator('[data-testid="agent-input-messages"] li');
    expect(await input.count()).toBe(detail.agent_input.length);
    expect(await input.first().getAttribute('data-role')).toBe(detail.agent_input[0].role);
    expect(await input.first().innerText()).toContain(detail.agent_input[0].parts[0].content);
    const output = page.locator('[data-testid="agent-output-messages"] li');
    const outputParts = detail.agent_output[0].parts as { type: string; name?: string; content?: string }[];
    expect(await output.first().innerText()).toContain(outputParts.find((p) => p.type === 'text')!.content);
    const toolParts = outputParts.filter((p) => p.type === 'tool_call');
    expect(await output.first().locator('[data-testid="message-tool-call"]').count()).toBe(toolParts.length);
    for (const part of toolParts) expect(await output.first().innerText()).toContain(part.name);
    await page.click('[data-testid="agent-input-raw-toggle"]');
    expect(JSON.parse(await page.locator('[data-testid="agent-input-raw"]').innerText())).toEqual(detail.agent_input);
    await page.click('[data-testid="agent-input-raw-toggle"]');
    await page.locator('[data-testid="agent-input-messages"]').waitFor();
    const spanIds = await page.locator('[data-testid="waterfall"] [data-span-id]').evaluateAll((b) => b.map((x) => x.getAttribute('data-span-id')));
    expect(spanIds).toEqual(bundle.spans.map((s: { otel_span_id: string }) => s.otel_span_id));
    const firstDuration = await page.locator('[data-span-index="0"] .span-duration').innerText();
    expect(firstDuration).toBe(formatMs(bundle.spans[0].duration_ms));

    // Keyboard: arrow down to the second span, Enter opens its attributes (one-span bundle page).
    await page.focus('[data-span-index="0"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="span-detail"]').waitFor();
    const one = await rest(`/traces/${traceId}?expand=context&project_id=${projectId}&spans_offset=1&spans_limit=1`);
    const attributeNames = Object.keys(one.spans[0].attributes ?? {});
    const detailText = await page.locator('[data-testid="span-detail"]').innerText();
    for (const name of attributeNames.slice(0, 5)) expect(detailText).toContain(name);
    await screenshot(page, '10-trace');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page);
    await screenshot(page, '11-trace-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('lists issues with filters, opens one, and starts a review', async () => {
    await page.click('[data-tab="issues"]');
    await page.locator('[data-testid="issues-table"]').waitFor();
    const active = await rest(`/projects/${projectId}/issues?status=open,in_progress`);
    // The page's issues, sorted by last seen (newest first) by default.
    const shown = await rowOrder(page, 'issues-table');
    expect(shown).toEqual(byLastSeen(active.issues));
    await screenshot(page, '12-issues');

    // Tag filter: tag one issue through the API, pick the tag in the list's filter.
    const tag = await svc.call('POST', '/issues/tags', { body: { project_id: projectId, name: 'checkout', color: '#d68a1a' } });
    expect(tag.status).toBe(201);
    const tagged = active.issues[active.issues.length - 1];
    expect((await svc.call('PUT', `/issues/${tagged.id}/tags/${tag.body.id}`)).status).toBeLessThan(300);
    await page.reload();
    await page.locator('[data-testid="issues-table"]').waitFor();
    await page.selectOption('[data-testid="filter-tag"]', tag.body.id);
    await page.waitForURL(/tag=/);
    const byTag = await rest(`/projects/${projectId}/issues?status=open,in_progress&tag=${tag.body.id}`);
    expect(byTag.issues.map((i: { id: string }) => i.id)).toEqual([tagged.id]);
    await expect.poll(() => rowOrder(page, 'issues-table')).toEqual([tagged.id]);
    expect(await page.locator(`[data-testid="issues-table"] tr[data-row-key="${tagged.id}"] .tag-chip`).innerText()).toContain('checkout');
    await page.selectOption('[data-testid="filter-tag"]', '');
    await page.selectOption('[data-testid="filter-status"]', 'all');
    await page.waitForURL(/status=all/);
    const everything = await rest(`/projects/${projectId}/issues`);
    await expect.poll(() => rowOrder(page, 'issues-table')).toEqual(byLastSeen(everything.issues));

    const open = active.issues.find((i: { status: string }) => i.status === 'open');
    expect(open, 'the demo leaves at least one open issue').toBeTruthy();
    await page.click(`[data-testid="issues-table"] tr[data-row-key="${open.id}"] a`);
    await page.locator('[data-testid="issue-title"]').waitFor();
    expect(await page.locator('[data-testid="issue-status"]').getAttribute('data-status')).toBe('open');
    expect(await page.locator('[data-testid="issue-occurrence-count"]').innerText()).toBe(formatCount(open.occurrence_count));
    const occurrences = await rest(`/issues/${open.id}/occurrences`);
    await page.locator('[data-testid="occurrences-table"]').waitFor();
    const linked = await page.locator('[data-testid="occurrences-table"] a[data-trace-id]').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    // Newest first by when they happened.
    const inTime = [...occurrences.occurrences].sort((a: { occurred_at: string }, b: { occurred_at: string }) => Date.parse(b.occurred_at.replace(' ', 'T') + (/Z$/.test(b.occurred_at) ? '' : 'Z')) - Date.parse(a.occurred_at.replace(' ', 'T') + (/Z$/.test(a.occurred_at) ? '' : 'Z')));
    expect([...linked].sort()).toEqual(occurrences.occurrences.map((o: { trace_id: string }) => `/p/${projectId}/traces/${o.trace_id}`).sort());
    expect(linked[0]).toBe(`/p/${projectId}/traces/${inTime[0].trace_id}`);
    await page.locator('[data-testid="ticket-none"], [data-testid="ticket-link"]').first().waitFor();
    await screenshot(page, '13-issue-open');

    await page.click('button[data-action="start-review"]');
    await page.locator('[data-testid="issue-status"][data-status="in_progress"]').waitFor();
    const after = await rest(`/issues/${open.id}`);
    expect(after.status).toBe('in_progress');
    expect(after.assignee_user_id).not.toBeNull();
    await expect.poll(() => page.locator('[data-testid="issue-assignee"]').getAttribute('data-user-id')).toBe(after.assignee_user_id);
    // The assignee by name (the admin key may list the tenant's users), not as a raw id.
    const { users } = await rest('/users');
    const assignee = users.find((u: { id: string }) => u.id === after.assignee_user_id);
    await expect.poll(() => page.locator('[data-testid="issue-assignee"]').innerText()).toContain(assignee.name);
    await screenshot(page, '14-issue-in-review');

    // An occurrence link leads to its trace.
    await page.locator('[data-testid="occurrences-table"] a[data-trace-id]').first().click();
    await page.locator('[data-testid="waterfall"]').waitFor();
  });

  it('pages through a long trace’s spans with the context bundle', async () => {
    await expect.poll(async () => (await rest(`/projects/${longProjectId}/traces`)).traces.length, { timeout: 20_000 }).toBe(1);
    const traceId = (await rest(`/projects/${longProjectId}/traces`)).traces[0].id;
    await page.goto(`${svc.url}/p/${longProjectId}/traces/${traceId}`);
    await page.locator('[data-testid="waterfall"]').waitFor();
    const count = () => page.locator('[data-testid="waterfall"] [data-span-id]').count();
    expect(await count()).toBe(100);
    expect(await page.locator('[data-testid="span-count"]').innerText()).toBe('(100 of 231 loaded)');
    await page.click('[data-testid="load-more-spans"]');
    await expect.poll(count).toBe(200);
    await page.click('[data-testid="load-more-spans"]');
    await expect.poll(count).toBe(231);
    expect(await page.locator('[data-testid="load-more-spans"]').count()).toBe(0);
    const tail = await rest(`/traces/${traceId}?expand=context&project_id=${longProjectId}&spans_offset=200&spans_limit=100&include_attributes=false&include_events=false`);
    const shownTail = await page.locator('[data-testid="waterfall"] [data-span-id]').evaluateAll((b) => b.slice(200).map((x) => x.getAttribute('data-span-id')));
    expect(shownTail).toEqual(tail.spans.map((s: { otel_span_id: string }) => s.otel_span_id));
    // The 231st span's attributes come from a one-span page at its offset.
    await page.click('[data-span-index="230"]');
    await page.locator('[data-testid="span-detail"]').waitFor();
    const last = await rest(`/traces/${traceId}?expand=context&project_id=${longProjectId}&spans_offset=230&spans_limit=1`);
    expect(await page.locator('[data-testid="span-detail"]').innerText()).toContain(String(last.spans[0].attributes['step.index']));
    await screenshot(page, '15-long-trace', { fullPage: false });
  });

  it('shows a project without traces how to send one', async () => {
    await page.goto(`${svc.url}/p/${emptyProjectId}`);
    const snippet = page.locator('[data-testid="exporter-snippet"]');
    await snippet.waitFor();
    const text = await snippet.innerText();
    expect(text).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${svc.url}`);
    expect(text).toContain(`x-lookout-project=${emptyProjectId}`);
    expect(text).toContain('Authorization=Bearer%20');
    expect(await page.locator('[data-testid="chart-requests"]').count()).toBe(0);
    await page.click('[data-tab="traces"]');
    await page.locator('[data-testid="exporter-snippet"]').waitFor();
    await screenshot(page, '16-empty-project');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page);
    await screenshot(page, '17-empty-project-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps the key to its tab: a new tab asks to sign in, and a deep link reloads in place', async () => {
    await page.goto(`${svc.url}/p/${projectId}/issues`);
    await page.locator('[data-testid="issues-table"], .state-empty').first().waitFor();
    const other = await browser.context.newPage();
    await other.goto(`${svc.url}/p/${projectId}`);
    await other.locator('#api-key').waitFor();
    await other.close();
    const api404 = await page.evaluate(async () => {
      const res = await fetch('/api/no-such-route', { headers: { accept: 'text/html' } });
      return { status: res.status, type: res.headers.get('content-type') };
    });
    expect(api404.status).toBe(404);
    expect(api404.type).toMatch(/json/);
  });

  it('signs out and forgets the key', async () => {
    await page.click('text=Sign out');
    await page.locator('#api-key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('lookout.apiKey'))).toBeNull();
    expect(browser.consoleErrors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404)/.test(e))).toEqual([]);
  });
});
