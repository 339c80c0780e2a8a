import type { RequestHandler } from 'express';
import { STORE_RETRY_AFTER_SECONDS } from './errors.js';

/**
 * No request is left hanging: one not answered within `seconds` (REQUEST_TIMEOUT_SECONDS, above the
 * query time limit, so a query's own 504 comes first) is answered 503 `store_unavailable` with
 * Retry-After. Every statement is bounded on its own too (PostgreSQL statement and connect
 * timeouts, ClickHouse request timeouts); this catches what those cannot, such as a PostgreSQL
 * frozen mid-statement, whose connection neither answers nor closes. The handler's late answer, if
 * it ever comes, is dropped. A response already streaming is left alone.
 */
export function requestDeadline(seconds: number): RequestHandler {
  return (req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent || res.writableEnded) return;
      req.log?.warn({ timeoutSeconds: seconds }, 'request not answered in time; answering 503 store_unavailable');
      res
        .status(503)
        .set('Retry-After', String(STORE_RETRY_AFTER_SECONDS))
        .json({ detail: `No answer within ${seconds} s: a store is not answering; retry shortly`, code: 'store_unavailable' });
    }, seconds * 1000);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}
