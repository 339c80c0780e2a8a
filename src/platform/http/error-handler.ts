import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError } from './errors.js';
import { storeUnavailable } from '../store-errors.js';
import type { Metrics } from '../metrics/metrics.js';

/** Unknown routes: 404 `not_found`, in the same body shape as every other error. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ detail: `No route for ${req.method} ${req.path}`, code: 'not_found' });
};

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/**
 * Writes `{detail, code}` for every failure. Body-parser failures keep their 4xx status (malformed
 * JSON is the client's fault, never a 500); anything unexpected is logged in full and answered
 * with a generic 500 so no stack trace reaches a client. `metrics` counts 429/503 answers by reason
 * and PostgreSQL errors by SQLSTATE.
 */
export const errorHandler = (metrics?: Metrics): ErrorRequestHandler => (err, req, res, _next) => {
  metrics?.countError(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  if (err instanceof HttpError) {
    metrics?.countOverload(err.status, err.reason);
    res.set(err.headers).status(err.status).json({ detail: err.detail, code: err.code });
    return;
  }
  // The router decodes path parameters with decodeURIComponent; malformed percent-encoding
  // (`/api/projects/%FF%FE`) throws a URIError there, before any route runs. The caller's fault.
  if (err instanceof URIError) {
    res.status(400).json({ detail: 'Malformed percent-encoding in the request path', code: 'validation_error' });
    return;
  }
  const parserError = err as BodyParserError;
  if (parserError.type === 'entity.parse.failed') {
    res.status(400).json({ detail: 'Malformed JSON body', code: 'validation_error' });
    return;
  }
  if (parserError.type === 'entity.too.large') {
    res.status(413).json({ detail: 'Request body is too large', code: 'payload_too_large' });
    return;
  }
  if (parserError.expose && parserError.status && parserError.status >= 400 && parserError.status < 500) {
    res.status(parserError.status).json({ detail: String((err as Error).message), code: 'validation_error' });
    return;
  }
  // PostgreSQL class 22 (data exception: bad encoding, out-of-range number, invalid text) is the
  // caller's input that slipped past validation: a 400, not a server fault.
  const sqlState = (err as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState) && (err as { severity?: unknown }).severity) {
    req.log?.warn({ err }, 'data exception from PostgreSQL');
    res.status(400).json({ detail: 'A value in the request cannot be stored', code: 'validation_error' });
    return;
  }
  // A store that refused, reset, timed out or ran out of connections or space: 503 + Retry-After.
  const unavailable = storeUnavailable(err);
  if (unavailable) {
    req.log?.warn({ err, store: unavailable.store }, 'store unavailable');
    res.set(unavailable.headers).status(503).json({ detail: unavailable.detail, code: unavailable.code });
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  res.status(500).json({ detail: 'Internal server error', code: 'internal_error' });
};
