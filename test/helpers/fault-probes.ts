/** Small probes the store-fault tests share: timing a call, /readyz, and waiting for a condition. */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of `work` and how long it took. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

/** `/readyz` of the service at `baseUrl`: status, body and how long it took to answer. */
export async function readyz(baseUrl: string): Promise<{ status: number; body: any; ms: number }> {
  const { value, ms } = await timed(async () => {
    const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(30_000) });
    return { status: res.status, body: await res.json() };
  });
  return { ...value, ms };
}

/** Polls `check` every 250 ms until it holds (a throw counts as not yet); the wait in ms, or throws after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check().catch(() => false)) return Date.now() - started;
    await sleep(250);
  }
  throw new Error(`${what} not within ${timeoutMs} ms`);
}
