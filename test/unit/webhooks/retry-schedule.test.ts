import { describe, expect, it } from 'vitest';
import { BACKOFF_STEPS, GIVE_UP_AFTER_STEPS, nextAttemptAt, parseRetryAfter } from '../../../src/workspace/webhooks/retry-schedule.js';

const BASE = 30_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');

describe('webhook retry schedule', () => {
  it('waits 30 s, 2 min, 10 min, 1 h, 6 h, then 6 h, with the default base and no jitter', () => {
    const mid = () => 0.5;
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) => nextAttemptAt({ attempt, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: null, random: mid })! - t0);
    expect(delays).toEqual([30_000, 120_000, 600_000, 3_600_000, 21_600_000, 21_600_000]);
    expect(BACKOFF_STEPS.length).toBe(5);
    expect(GIVE_UP_AFTER_STEPS * BASE).toBe(24 * 3_600_000);
  });

  it('jitters each delay within ±20 %', () => {
    const low = nextAttemptAt({ attempt: 2, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: null, random: () => 0 })! - t0;
    const high = nextAttemptAt({ attempt: 2, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: null, random: () => 0.999999 })! - t0;
    expect(low).toBe(96_000);
    expect(high).toBeGreaterThan(143_999);
    expect(high).toBeLessThanOrEqual(144_000);
  });

  it('lets a longer Retry-After win, and a shorter one not shorten the backoff', () => {
    const mid = () => 0.5;
    expect(nextAttemptAt({ attempt: 1, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: 300_000, random: mid })! - t0).toBe(300_000);
    expect(nextAttemptAt({ attempt: 1, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: 1_000, random: mid })! - t0).toBe(30_000);
  });

  it('gives up when the next attempt would fall more than 24 h after the event', () => {
    const mid = () => 0.5;
    const now = t0 + 19 * 3_600_000;
    expect(nextAttemptAt({ attempt: 8, firstQueuedAt: t0, now, baseMs: BASE, retryAfterMs: null, random: mid })).toBeNull();
    expect(nextAttemptAt({ attempt: 8, firstQueuedAt: t0, now: t0 + 17 * 3_600_000, baseMs: BASE, retryAfterMs: null, random: mid })).toBe(t0 + 23 * 3_600_000);
    // A Retry-After beyond the window gives up too.
    expect(nextAttemptAt({ attempt: 1, firstQueuedAt: t0, now: t0, baseMs: BASE, retryAfterMs: 25 * 3_600_000, random: mid })).toBeNull();
  });

  it('parses Retry-After as seconds or an HTTP date, and ignores anything else', () => {
    expect(parseRetryAfter('120', t0)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', t0)).toBe(0);
    expect(parseRetryAfter(new Date(t0 + 90_000).toUTCString(), t0)).toBe(90_000);
    expect(parseRetryAfter(new Date(t0 - 90_000).toUTCString(), t0)).toBe(0);
    for (const bad of [undefined, '', 'soon', '-5', '1.5']) expect(parseRetryAfter(bad, t0)).toBeNull();
  });
});
