import type { HttpError } from '../../platform/http/errors.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import type { IngestResult, LogsIngestResult } from '../ingest-service.js';

/**
 * What an OTLP export counts in the Prometheus ingest counters, whichever transport carried it
 * (OTLP/HTTP, otlp-router.ts; OTLP/gRPC, otlp-grpc-export.ts): one place, so an exporter switched
 * from one to the other shows the same series.
 */

/** A request's decompressed body (HTTP) or message (gRPC) in bytes. */
export function countBody(metrics: Metrics, bytes: number): void {
  metrics.ingestBodyBytes.observe(bytes);
}

/** A trace export answered: its spans accepted, duplicate and rejected by reason, and the request as `ok`. */
export function countSpansExport(metrics: Metrics, result: IngestResult): void {
  metrics.ingestRequests.inc({ code: 'ok' });
  metrics.spansAccepted.inc(result.acceptedSpans);
  metrics.spansDuplicate.inc(result.duplicateSpans);
  metrics.spansRejected.inc({ reason: 'invalid' }, result.rejectedSpans - result.rejectedOverLimit);
  metrics.spansRejected.inc({ reason: 'trace_span_limit' }, result.rejectedOverLimit);
}

/** A logs export answered: its records accepted and rejected by reason, and the request as `ok`. */
export function countLogsExport(metrics: Metrics, result: LogsIngestResult): void {
  metrics.ingestRequests.inc({ code: 'ok' });
  metrics.logRecordsAccepted.inc(result.acceptedLogRecords);
  metrics.logRecordsRejected.inc({ reason: 'invalid' }, result.rejectedLogRecords - result.rejectedOverLimit);
  metrics.logRecordsRejected.inc({ reason: 'trace_record_limit' }, result.rejectedOverLimit);
}

/** An export refused (any signal): the request by its error code, and a 429/503 by its reason. */
export function countRefusal(metrics: Metrics, error: HttpError): void {
  metrics.ingestRequests.inc({ code: error.code });
  metrics.countOverload(error.status, error.reason);
}
