/**
 * The health check against the code host's REST API (GitHub's shape: `GET /user`,
 * `GET /repos/{owner}/{repo}`). The base URL is CODE_HOST_API_URL so tests and GitHub Enterprise
 * installs can point it elsewhere. A check never throws: every failure becomes a stable error code
 * that the connection keeps as last_error_code.
 */

export type CheckFailureCode =
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'repository_not_found'
  | 'not_found'
  | 'server_error'
  | 'unexpected_status'
  | 'invalid_response'
  | 'timeout'
  | 'unreachable'
  | 'token_unavailable';

export type CheckResult<T> = { ok: true; value: T } | { ok: false; code: CheckFailureCode; message: string };

export interface Account {
  login: string;
  html_url: string | null;
}

export interface Repository {
  owner: string;
  name: string;
  html_url: string | null;
}

const TIMEOUT_MS = 5000;

function failureFor(status: number, notFound: CheckFailureCode, rateLimited: boolean): CheckFailureCode {
  if (status === 401) return 'unauthorized';
  if (status === 429 || (status === 403 && rateLimited)) return 'rate_limited';
  if (status === 403) return 'forbidden';
  if (status === 404) return notFound;
  if (status >= 500) return 'server_error';
  return 'unexpected_status';
}

async function getJson(baseUrl: string, apiPath: string, token: string, notFound: CheckFailureCode): Promise<CheckResult<Record<string, unknown>>> {
  const url = `${baseUrl.replace(/\/+$/, '')}${apiPath}`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'user-agent': 'lookout-code-host-check',
      },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, code: 'timeout', message: `No answer from ${url} within ${TIMEOUT_MS} ms` };
    return { ok: false, code: 'unreachable', message: `Could not reach ${url}` };
  }
  if (!response.ok) {
    const rateLimited = response.headers.get('x-ratelimit-remaining') === '0';
    await response.body?.cancel();
    return { ok: false, code: failureFor(response.status, notFound, rateLimited), message: `${url} answered ${response.status}` };
  }
  try {
    const body = (await response.json()) as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    return { ok: true, value: body as Record<string, unknown> };
  } catch {
    return { ok: false, code: 'invalid_response', message: `${url} did not answer a JSON object` };
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Who the token belongs to. */
export async function checkAccount(baseUrl: string, token: string): Promise<CheckResult<Account>> {
  const result = await getJson(baseUrl, '/user', token, 'not_found');
  if (!result.ok) return result;
  const login = text(result.value.login);
  if (!login) return { ok: false, code: 'invalid_response', message: 'The code host did not name the account' };
  return { ok: true, value: { login, html_url: text(result.value.html_url) } };
}

/** The repository as the code host spells it (owner and name are canonicalised by its answer). */
export async function checkRepository(baseUrl: string, token: string, owner: string, name: string): Promise<CheckResult<Repository>> {
  const result = await getJson(baseUrl, `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`, token, 'repository_not_found');
  if (!result.ok) return result;
  const ownerObject = result.value.owner as Record<string, unknown> | undefined;
  return {
    ok: true,
    value: {
      owner: text(ownerObject?.login) ?? owner,
      name: text(result.value.name) ?? name,
      html_url: text(result.value.html_url),
    },
  };
}
