import http from 'node:http';
import https from 'node:https';
import { assertConnectable, guardedLookup, RefusedAddressError } from './url-guard.js';
import { parseRetryAfter } from './retry-schedule.js';

/** A 2xx within this long is success (docs/webhooks.md "Retries"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The receiver's answer is read only this far, then dropped: nothing of it is kept. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  /** Why it failed, in words for the delivery log (never the receiver's body). */
  error: string | null;
  retryAfterMs: number | null;
}

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Aborts the attempt (service shutdown). */
  signal?: AbortSignal;
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof RefusedAddressError) return error.message;
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ETIMEDOUT_WEBHOOK':
      return `no answer within ${Math.round(timeoutMs / 1000)} s`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host does not resolve';
    case 'ECONNRESET':
      return 'connection reset by the receiver';
    case 'ABORT_ERR':
      return 'aborted: the service stopped';
    default:
      return code ? `network error ${code}` : String((error as Error)?.message ?? error).slice(0, 200);
  }
}

/**
 * POSTs one webhook body. Never follows redirects (a 3xx is a failure: following one could lead to
 * an address the guard refuses); connects only to addresses the guard allows; gives the whole
 * exchange `timeoutMs`. Resolves with the outcome; never rejects.
 */
export function sendWebhook(target: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendOutcome> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const fail = (error: unknown) => finish({ ok: false, status: null, error: describe(error, timeoutMs), retryAfterMs: null });
    let url: URL;
    try {
      url = new URL(target);
      assertConnectable(url, options.allowPrivate);
    } catch (error) {
      fail(error);
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Lookout-Webhooks/1' },
      agent: false,
      lookup: guardedLookup(options.allowPrivate),
      signal: options.signal,
    });
    timer = setTimeout(() => request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT_WEBHOOK' })), timeoutMs);
    request.on('error', fail);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) response.destroy();
      });
      const done = () => {
        if (status >= 200 && status < 300) finish({ ok: true, status, error: null, retryAfterMs: null });
        else {
          const header: string | string[] | undefined = response.headers['retry-after'];
          finish({
            ok: false,
            status,
            error: status >= 300 && status < 400 ? `redirect ${status} not followed` : `receiver answered ${status}`,
            retryAfterMs: parseRetryAfter(typeof header === 'string' ? header : header?.[0], Date.now()),
          });
        }
      };
      response.on('end', done);
      // A receiver that answered and then cut the body still answered: its status decides.
      response.on('close', done);
      response.on('error', () => undefined);
    });
    request.end(body);
  });
}
