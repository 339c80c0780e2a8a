import { clearApiKey, getApiKey } from '../session.js';

/** A failed API call, carrying the service's `{detail, code}` error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code: string | null,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

type Query = Record<string, string | number | boolean | null | undefined>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Listeners told when the key stops working (401), so the app can send the user back to sign-in. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function request<T>(method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<T> {
  const key = options.key ?? getApiKey();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(`/api${path}`, { method, headers, body });
  } catch (error) {
    throw new ApiError(0, `The service did not answer (${(error as Error).message})`, 'network_error');
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    const errorBody = (parsed ?? {}) as { detail?: unknown; code?: unknown };
    const detail = typeof errorBody.detail === 'string' ? errorBody.detail : `HTTP ${response.status}`;
    const code = typeof errorBody.code === 'string' ? errorBody.code : null;
    if (response.status === 401 && options.key === undefined) {
      clearApiKey();
      for (const listener of unauthorizedListeners) listener();
    }
    throw new ApiError(response.status, detail, code);
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string, query?: Query, key?: string) => request<T>('GET', withQuery(path, query), { key }),
  patch: <T>(path: string, body?: unknown) => request<T>('PATCH', path, { body }),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body }),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, { body }),
  delete: <T>(path: string) => request<T>('DELETE', path),
};

/** What to tell a person about a failed call: the service's own detail, plus what a status means here. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return (error as Error)?.message ?? String(error);
  switch (error.status) {
    case 401:
      return `The API key was not accepted: ${error.detail}`;
    case 403:
      return `This API key's scope does not allow that: ${error.detail}`;
    case 404:
      return `Not found: ${error.detail}`;
    default:
      return error.detail;
  }
}
