import { expect } from 'vitest';
import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { acknowledgedCount } from './acknowledged-count.js';
import { sleep, until } from './fault-probes.js';
import { EXPORTER_TIMEOUT_MS, GENERATIONS_PER_RUN, type SteadySender } from './steady-sender.js';

/**
 * What the store-fault tests expect of every ingest answer since `since`: 200, or 503 with
 * Retry-After (and `code` when given), each before the exporter's 10 s timeout; none left hanging.
 */
export function expectHonestAnswers(sender: SteadySender, since: number, code?: string): void {
  const answers = sender.answersSince(since);
  expect(answers.length).toBeGreaterThan(0);
  for (const a of answers) {
    expect([200, 503]).toContain(a.status);
    if (a.status === 503) {
      if (code) expect(a.code).toBe(code);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    expect(a.ms).toBeLessThan(EXPORTER_TIMEOUT_MS);
  }
  expect(sender.hung).toBe(0);
}

/**
 * The store-fault tests' last word: a little more steady ingest after the recovery, the sender
 * stopped once every run in hand is acknowledged, then every run it had acknowledged is stored
 * exactly once (its spans and its generation events), nothing unacknowledged is, and settling
 * processes every run once, by itself, within `settleWithinMs`.
 */
export async function expectAcknowledgedStoredOnce(sender: SteadySender, ch: ClickHouseStore, projectId: string, settleWithinMs = 90_000): Promise<void> {
  await sleep(3_000);
  await sender.stop();
  expect(sender.acknowledged.size).toBeGreaterThan(5);
  const count = () => acknowledgedCount(ch, projectId, sender.acknowledged);
  const first = await count();
  expect({ lost: first.lost, unacknowledged: first.unacknowledged, doubled: first.doubled }).toEqual({ lost: [], unacknowledged: [], doubled: [] });
  expect(first.generations).toBe(GENERATIONS_PER_RUN * first.acknowledged);
  await until('every run processed', async () => (await count()).processed === first.acknowledged, settleWithinMs);
  expect((await count()).processed).toBe(first.acknowledged);
}
