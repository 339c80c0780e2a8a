/**
 * When a failed delivery is tried again (docs/webhooks.md "Retries"). With the default base of 30 s
 * the retries come 30 s, 2 min, 10 min, 1 h and 6 h after each failure, then every 6 h, each with
 * ±20 % jitter so endpoints that failed together do not retry together; a `Retry-After` longer
 * than the backoff wins. Delivery gives up when the next attempt would fall more than 24 h after
 * the event. Every figure is a multiple of the base, so tests that lower it (the service's
 * `webhookBackoffBaseMs` option) run the whole schedule, give-up included, in seconds.
 */
export const DEFAULT_BACKOFF_BASE_MS = 30_000;
export const BACKOFF_STEPS = [1, 4, 20, 120, 720] as const;
export const GIVE_UP_AFTER_STEPS = 2880;
const JITTER = 0.2;

export interface RetryInput {
  /** The attempt that just failed (1 = the first). */
  attempt: number;
  /** When the event was first queued for this endpoint (ms). */
  firstQueuedAt: number;
  now: number;
  baseMs: number;
  retryAfterMs: number | null;
  random?: () => number;
}

/** The time of the next attempt, or null to give up. */
export function nextAttemptAt(input: RetryInput): number | null {
  const step = BACKOFF_STEPS[Math.min(input.attempt, BACKOFF_STEPS.length) - 1] * input.baseMs;
  const jittered = step * (1 - JITTER + 2 * JITTER * (input.random ?? Math.random)());
  const at = input.now + Math.max(jittered, input.retryAfterMs ?? 0);
  return at > input.firstQueuedAt + GIVE_UP_AFTER_STEPS * input.baseMs ? null : Math.round(at);
}

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Anything else is ignored. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // HTTP-dates end in GMT (IMF-fixdate and the two obsolete forms); Date.parse alone takes far more.
  if (!/^[A-Za-z]{3,9}, .+ GMT$|^[A-Za-z]{3} [A-Za-z]{3} .+\d{4}$/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
