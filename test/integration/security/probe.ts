/**
 * Checks shared by the security tests. Each returns a problem description (or null) so a test can
 * sweep every operation and report all offenders at once instead of stopping at the first.
 */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** What a Node or V8 stack trace, or a leaked source path, looks like in a response. */
const STACK = /(\bat [\w$.<>]+ \(|\n\s+at |node_modules|\/src\/[\w/-]+\.(ts|js)|\.ts:\d+:\d+|\.js:\d+:\d+|PostgresError|ClickHouseError)/;

/** Never a 5xx; every error is {detail: string, code: string}; no stack trace anywhere in the body. */
export function answerProblem(res: Answer): string | null {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
  if (res.status >= 500) return `status ${res.status} ${text.slice(0, 300)}`;
  if (STACK.test(text)) return `stack trace or source path in the body: ${text.slice(0, 300)}`;
  if (res.status >= 400) {
    const body = res.body as { detail?: unknown; code?: unknown } | undefined;
    if (typeof body !== 'object' || body === null || typeof body.detail !== 'string' || typeof body.code !== 'string') {
      return `error body is not {detail, code}: ${text.slice(0, 300)}`;
    }
  }
  return null;
}

/** Strings of another tenant or project that appear in a response without having been in the request. */
export function leakProblem(res: Answer, markers: string[], request: string): string | null {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
  const lower = text.toLowerCase();
  const leaked = markers.filter((m) => m && !request.toLowerCase().includes(m.toLowerCase()) && lower.includes(m.toLowerCase()));
  return leaked.length > 0 ? `leaks ${leaked.join(', ')}: ${text.slice(0, 300)}` : null;
}

/** The detail with the ids the caller sent replaced, so two answers can be compared for an existence oracle. */
export function normalizedAnswer(res: Answer, echoed: string[]): string {
  let detail = String(res.body?.detail ?? '');
  for (const id of echoed) if (id) detail = detail.split(id).join('<id>');
  return `${res.status} ${res.body?.code ?? ''} ${detail}`;
}

/** Runs tasks with at most `width` in flight (the sweeps send thousands of small requests). */
export async function inParallel<T>(tasks: (() => Promise<T>)[], width = 4): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return results;
}
