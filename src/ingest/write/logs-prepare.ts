import { createHash } from 'node:crypto';
import { decodeJsonLogs, decodeProtobufLogs, type DecodedLogRecord, type DecodedLogsExport } from '../otlp/otlp-logs-decode.js';
import type { OtlpEncoding } from '../otlp/otlp-response.js';
import { otlpJsonText } from '../otlp/otlp-decode-json.js';
import { OtlpDecodeError } from '../../spans/otlp-types.js';
import { DEFAULT_MAX_FUTURE_SKEW_MS, RETENTION_DAYS } from '../../spans/span-validation.js';
import { lookoutTraceId } from '../../spans/trace-id.js';
import { nsToDateTime64, nsToMs } from '../../platform/clickhouse/clickhouse-time.js';
import { PROJECT_RESOURCE_ATTRIBUTE } from './ingest-prepare.js';
import { computeTask } from '../../platform/compute/compute-task.js';

/**
 * The CPU-heavy part of one `POST /v1/logs` request, run on the compute pool like prepareIngest:
 * decode the body, check each record (partial success), give each resource its project, and build
 * the `span_logs` rows (clickhouse/011_span_logs.sql) as JSONEachRow lines. Pure and synchronous.
 *
 * A record is kept only as part of its span's trace: one without a span context (trace id and span
 * id) is rejected with the reason, never acknowledged and dropped. Records outside the window the
 * stores keep are rejected as spans are (span-validation.ts).
 */

export interface PrepareLogsInput {
  body: Uint8Array;
  encoding: OtlpEncoding;
  tenantId: string;
  /** The key's or the header's project; null: each resource names its own. */
  fixedProject: string | null;
  /** INGEST_MAX_FUTURE_SKEW_MS. */
  maxFutureSkewMs?: number;
  /** The server clock in ms (a parameter so tests can pin it). */
  nowMs?: number;
}

export interface LogTraceKey {
  tenantId: string;
  projectId: string;
  traceId: string;
}

export type PrepareLogsResult =
  | { kind: 'undecodable'; message: string }
  | { kind: 'no_project' }
  | {
      kind: 'prepared';
      acceptedRecords: number;
      rejectedRecords: number;
      errorMessage: string;
      projects: string[];
      /** `span_logs` rows as JSONEachRow lines. */
      lines: string[];
      /** Distinct traces the rows belong to. */
      traces: LogTraceKey[];
      /** For each line, the index of its trace in `traces`. */
      lineTraces: number[];
    };

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const MAX_LISTED = 5;
const DAY_MS = 86_400_000;

/** The problem with a record, or null when it can be kept. `timeNs`: its effective time. */
function recordProblem(r: DecodedLogRecord, timeNs: string, nowMs: number, maxFutureSkewMs: number): string | null {
  if (r.decodeProblem) return r.decodeProblem;
  if (r.traceId === '' || r.spanId === '' || /^0+$/.test(r.traceId) || /^0+$/.test(r.spanId)) {
    return 'no span context (trace_id and span_id): Lookout keeps log records only as part of the span they were emitted in';
  }
  if (!TRACE_ID.test(r.traceId)) return `invalid trace_id "${r.traceId.slice(0, 40)}" (must be 16 bytes, 32 hex characters)`;
  if (!SPAN_ID.test(r.spanId)) return `invalid span_id "${r.spanId.slice(0, 40)}" (must be 8 bytes, 16 hex characters)`;
  if (!/^\d{1,20}$/.test(timeNs)) return 'invalid time_unix_nano (must be an unsigned 64-bit integer)';
  const ms = nsToMs(timeNs);
  if (ms < nowMs - RETENTION_DAYS * DAY_MS) return `time ${new Date(ms).toISOString()} is before the ${RETENTION_DAYS}-day retention window`;
  if (ms > nowMs + maxFutureSkewMs) return `time ${new Date(ms).toISOString()} is more than ${maxFutureSkewMs} ms in the future (INGEST_MAX_FUTURE_SKEW_MS)`;
  return null;
}

function projectOf(resource: Record<string, unknown>, fixed: string | null): string | null {
  if (fixed) return fixed.toLowerCase();
  const value = resource[PROJECT_RESOURCE_ATTRIBUTE];
  return typeof value === 'string' && value !== '' ? value.toLowerCase() : null;
}

function decode(input: PrepareLogsInput): DecodedLogsExport {
  const body = Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  return input.encoding === 'protobuf' ? decodeProtobufLogs(body) : decodeJsonLogs(otlpJsonText(body));
}

export function prepareLogs(input: PrepareLogsInput): PrepareLogsResult {
  let decoded: DecodedLogsExport;
  try {
    decoded = decode(input);
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { kind: 'undecodable', message: err.message };
    throw err;
  }
  const nowMs = input.nowMs ?? Date.now();
  const nowNs = `${BigInt(nowMs) * 1_000_000n}`;
  const skew = input.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS;
  let accepted = 0;
  let rejected = 0;
  const listed: string[] = [];
  const projects = new Set<string>();
  const lines: string[] = [];
  const traces = new Map<string, { key: LogTraceKey; index: number }>();
  const lineTraces: number[] = [];
  let missingProject = false;
  for (const rl of decoded.resourceLogs) {
    const project = projectOf(rl.resource, input.fixedProject);
    // Records of one span in this request, counted so records of equal time keep their order.
    const seqs = new Map<string, number>();
    for (const sl of rl.scopes) {
      for (const r of sl.records) {
        const timeNs = r.timeNs !== '0' && r.timeNs !== '' ? r.timeNs : r.observedNs !== '0' && r.observedNs !== '' ? r.observedNs : nowNs;
        const problem = recordProblem(r, timeNs, nowMs, skew);
        if (problem !== null) {
          rejected++;
          if (listed.length < MAX_LISTED) listed.push(`${r.spanId && SPAN_ID.test(r.spanId) ? `record of span ${r.spanId}` : 'record'}: ${problem}`);
          continue;
        }
        if (project === null) {
          missingProject = true;
          continue;
        }
        accepted++;
        projects.add(project);
        const traceId = lookoutTraceId(project, r.traceId);
        const seq = seqs.get(r.spanId) ?? 0;
        seqs.set(r.spanId, seq + 1);
        const body = JSON.stringify(r.body);
        const attributes = JSON.stringify(r.attributes);
        const recordId = createHash('sha256')
          .update(JSON.stringify([r.spanId, timeNs, seq, r.eventName, r.severityNumber, r.severityText, body, attributes]))
          .digest('hex')
          .slice(0, 32);
        lines.push(
          JSON.stringify({
            tenant_id: input.tenantId,
            project_id: project,
            trace_id: traceId,
            otel_trace_id: r.traceId,
            span_id: r.spanId,
            record_id: recordId,
            time_ns: timeNs,
            seq,
            event_name: r.eventName,
            severity_number: Math.max(0, Math.min(255, r.severityNumber | 0)),
            severity_text: r.severityText,
            body,
            attributes,
            scope_name: sl.scopeName,
            timestamp: nsToDateTime64(timeNs),
          }),
        );
        const traceKey = `${project}\u0000${traceId}`;
        let known = traces.get(traceKey);
        if (!known) traces.set(traceKey, (known = { key: { tenantId: input.tenantId, projectId: project, traceId }, index: traces.size }));
        lineTraces.push(known.index);
      }
    }
  }
  if (missingProject) return { kind: 'no_project' };
  let errorMessage = '';
  if (rejected > 0) {
    const more = rejected > listed.length ? `; and ${rejected - listed.length} more` : '';
    errorMessage = `rejected ${rejected} of ${accepted + rejected} log records: ${listed.join('; ')}${more}`;
  }
  // Every resource's project is checked, even when all its records were rejected, so a wrong one is reported.
  for (const rl of decoded.resourceLogs) {
    const project = projectOf(rl.resource, input.fixedProject);
    if (project !== null) projects.add(project);
  }
  return { kind: 'prepared', acceptedRecords: accepted, rejectedRecords: rejected, errorMessage, projects: [...projects], lines, traces: [...traces.values()].map((t) => t.key), lineTraces };
}

export const prepareLogsTask = computeTask<PrepareLogsInput, PrepareLogsResult>('prepare-logs', 'intake');
