import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestService } from '../../helpers/service.js';

/** Reads what the dashboard shows, so tests can hold it against the REST answers. */

export async function statText(page: Page, testId: string): Promise<string> {
  return (await page.locator(`[data-testid="${testId}-value"]`).innerText()).trim();
}

/** A table's cells by row key (data-row-key) and column key (data-column), as their visible text. */
export async function tableCells(page: Page, testId: string): Promise<Record<string, Record<string, string>>> {
  return page.locator(`[data-testid="${testId}"]`).evaluate((table) => {
    const result: Record<string, Record<string, string>> = {};
    for (const row of Array.from(table.querySelectorAll('tbody tr[data-row-key]'))) {
      const cells: Record<string, string> = {};
      for (const cell of Array.from(row.querySelectorAll('td[data-column]'))) {
        cells[cell.getAttribute('data-column')!] = (cell.textContent ?? '').trim();
      }
      result[row.getAttribute('data-row-key')!] = cells;
    }
    return result;
  });
}

/** The row keys of a table in display order. */
export async function rowOrder(page: Page, testId: string): Promise<string[]> {
  return page.locator(`[data-testid="${testId}"] tbody tr[data-row-key]`).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row-key')!));
}

/** A chart's companion data table: date → series label → text. */
export async function chartTable(page: Page, testId: string): Promise<Record<string, Record<string, string>>> {
  return page.locator(`[data-testid="${testId}-table"]`).evaluate((table) => {
    const result: Record<string, Record<string, string>> = {};
    for (const row of Array.from(table.querySelectorAll('tbody tr[data-date]'))) {
      const cells: Record<string, string> = {};
      for (const cell of Array.from(row.querySelectorAll('td[data-series]'))) cells[cell.getAttribute('data-series')!] = (cell.textContent ?? '').trim();
      result[row.getAttribute('data-date')!] = cells;
    }
    return result;
  });
}

/** The window the page asked about (the window picker writes it on the page). */
export async function shownWindow(page: Page): Promise<{ start: string; endExclusive: string; hours: string }> {
  const label = page.locator('[data-testid="window-label"]');
  return {
    start: (await label.getAttribute('data-start'))!,
    endExclusive: (await label.getAttribute('data-end-exclusive'))!,
    hours: (await label.getAttribute('data-hours'))!,
  };
}

/**
 * Readable on a narrow screen: nothing wider than the viewport (wide tables scroll inside their
 * box). Waits for the layout to follow the resize (two animation frames, then the charts'
 * ResizeObserver) instead of reading the width right after it.
 */
export async function expectNoSidewaysScroll(target: Page) {
  const widths = () =>
    target.evaluate(
      () =>
        new Promise<{ scrollWidth: number; innerWidth: number }>((resolve) =>
          requestAnimationFrame(() => requestAnimationFrame(() => resolve({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))),
        ),
    );
  await expect.poll(async () => {
    const { scrollWidth, innerWidth } = await widths();
    return scrollWidth <= innerWidth ? 'fits' : `${scrollWidth} > ${innerWidth}`;
  }, { timeout: 15_000 }).toBe('fits');
}

/** A REST answer the page is held against (admin key), failing the test on anything but 200. */
export async function restBody(svc: TestService, apiPath: string) {
  const res = await svc.call('GET', apiPath);
  expect(res.status, `${apiPath}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}
