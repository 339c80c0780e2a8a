import express, { type Request, type Response, type Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { authenticate, requireScope } from '../../tenancy/auth.js';
import { HttpError } from '../../platform/http/errors.js';
import { storeUnavailable } from '../../platform/store-errors.js';
import type { IngestService } from '../ingest-service.js';
import { PROJECT_HEADER } from '../ingest-service.js';
import type { Reservation } from '../write/ingest-budget.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import { readOtlpBody } from './otlp-body.js';
import { encodingOf, requireEncoding } from './otlp-request.js';
import { encodeErrorStatus, encodeExportResponse, encodeLogsExportResponse, OTLP_CONTENT_TYPES, type OtlpEncoding } from './otlp-response.js';
import { countBody, countLogsExport, countRefusal, countSpansExport } from './otlp-metrics.js';
import type { Principal } from '../../tenancy/tenancy-store.js';

/**
 * OTLP/HTTP at the root, so stock exporters work with
 * OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT: traces and logs. Answers follow the OTLP/HTTP
 * specification: the response body is in the request's encoding — an Export*ServiceResponse on success, a
 * google.rpc.Status for a failed protobuf request — and `{detail, code}` JSON otherwise.
 */

function sendError(res: Response, encoding: OtlpEncoding | null, error: HttpError, metrics: Metrics): void {
  countRefusal(metrics, error);
  res.set(error.headers).status(error.status);
  if (encoding === 'protobuf') {
    res.type(OTLP_CONTENT_TYPES.protobuf).send(encodeErrorStatus(error.status, error.detail));
  } else {
    res.json({ detail: error.detail, code: error.code });
  }
}

export function createOtlpRouter(deps: AppDeps, service: IngestService): Router {
  const router = express.Router();
  const limit = deps.config.otlpMaxBytes;
  const metrics = deps.metrics;

  /**
   * One OTLP/HTTP export: authentication, the memory admission, the body (limit, gzip), then the
   * signal's transport-neutral ingest (IngestService.ingest / ingestLogs), answered in the
   * request's encoding.
   */
  const exportRoute =
    (ingest: (principal: Principal, project: string | undefined, body: Buffer, encoding: OtlpEncoding) => Promise<Buffer>) =>
    async (req: Request, res: Response) => {
      // Known before anything else, so even an auth failure answers in the caller's encoding.
      const encoding = encodingOf(req.headers['content-type']);
      let reservation: Reservation | null = null;
      try {
        const principal = await authenticate(deps.sql, req, deps.config.faults.keyCacheSeconds);
        requireScope(principal, 'ingest');
        const requestEncoding = requireEncoding(req.headers['content-type']);
        // Admission: refused while settling lags past SETTLE_MAX_LAG_MS or decoding waits past
        // INGEST_MAX_QUEUE_MS; then memory: the body, what it inflates to and what it decodes into
        // are charged to this reservation as they come (INGEST_MAX_INFLIGHT_BYTES), and released
        // when the request ends (after the answer): the decoded rows live on the compute pool and
        // in the writer until then.
        reservation = service.admit();
        const body = await readOtlpBody(req, { limit, encoding: requestEncoding, reservation });
        countBody(metrics, body.length);
        const projectHeader = req.headers[PROJECT_HEADER];
        // Decoding, validation and row building run on the compute pool, not here. The store waits
        // inside are bounded (INGEST_TIMEOUT_MS): a store that does not answer is a 503 + Retry-After
        // well inside the exporter's own timeout, never a request left hanging.
        const answer = await ingest(principal, Array.isArray(projectHeader) ? projectHeader[0] : projectHeader, body, requestEncoding);
        res.status(200).type(OTLP_CONTENT_TYPES[requestEncoding]).send(answer);
      } catch (error) {
        reservation?.release();
        // A refusal can come before the body is read in full (413, 429, 401 ...). The answer goes out at
        // once on a connection that stays open: Node reads and drops the rest of the body, so the
        // exporter finishes sending and then reads the status. Closing instead (Connection: close, or
        // destroying the request) reset the connection under the unsent body, and the exporter saw
        // ECONNRESET, not 413, and retried the same body.
        if (res.headersSent) return;
        if (error instanceof HttpError) {
          sendError(res, encoding, error, metrics);
          return;
        }
        metrics.countError(error);
        // A store that is not there is a 503 the exporter retries, never a 500 it drops the batch on.
        const unavailable = storeUnavailable(error);
        if (unavailable) {
          req.log?.warn({ err: error }, 'OTLP ingest: store unavailable');
          sendError(res, encoding, unavailable, metrics);
          return;
        }
        req.log?.error({ err: error }, 'OTLP ingest failed');
        sendError(res, encoding, new HttpError(500, 'internal_error', 'Internal server error'), metrics);
      } finally {
        reservation?.release();
      }
    };

  router.post(
    '/v1/traces',
    exportRoute(async (principal, project, body, encoding) => {
      const result = await service.ingest(principal, project, body, encoding);
      countSpansExport(metrics, result);
      return encodeExportResponse(encoding, { rejectedSpans: result.rejectedSpans, errorMessage: result.errorMessage });
    }),
  );

  router.post(
    '/v1/logs',
    exportRoute(async (principal, project, body, encoding) => {
      const result = await service.ingestLogs(principal, project, body, encoding);
      countLogsExport(metrics, result);
      return encodeLogsExportResponse(encoding, { rejectedLogRecords: result.rejectedLogRecords, errorMessage: result.errorMessage });
    }),
  );

  // Traces and logs only: say so plainly instead of a bare 404, so a misconfigured exporter's log explains itself.
  for (const signal of ['metrics', 'profiles'] as const) {
    router.all(`/v1/${signal}`, (req: Request, res: Response) => {
      sendError(
        res,
        encodingOf(req.headers['content-type']),
        new HttpError(404, 'not_found', `Lookout accepts OpenTelemetry traces and logs only (POST /v1/traces, POST /v1/logs); ${signal} are not supported`),
        metrics,
      );
    });
  }
  return router;
}
