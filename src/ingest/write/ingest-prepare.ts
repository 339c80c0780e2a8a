import { emptyEncodedRows, encodeLines, encodeSpanEventRows, previewValues, type EncodedLines, type EncodedSpanEventRows } from './encoded-rows.js';
import { deriveSpanEventRows, type SpanEventRows } from '../../spans/event-rows.js';
import type { Origin } from '../../spans/origin.js';
import type { TraceNote } from './ingest-writer.js';
import { normalizeExport, type NormalizedSpan } from '../../spans/normalized-span.js';
import { decodeJsonExport, otlpJsonText } from '../otlp/otlp-decode-json.js';
import { decodeProtobufExport } from '../otlp/otlp-decode-protobuf.js';
import type { OtlpEncoding } from '../otlp/otlp-response.js';
import { OtlpDecodeError, type DecodedExport } from '../../spans/otlp-types.js';
import { buildSpanTree } from '../../spans/span-tree.js';
import { validateExport } from '../../spans/span-validation.js';
import { traceAgentName } from '../../spans/trace-summary.js';
import { packToolRows } from './packed-tool-rows.js';
import { tracePreviewRow, type TracePreviewRow } from '../../spans/trace-preview.js';
import { nsToMs } from '../../platform/clickhouse/clickhouse-time.js';
import { computeTask } from '../../platform/compute/compute-task.js';

/**
 * The CPU-heavy part of one OTLP request, run on the compute pool (src/platform/compute/): decode the
 * body, validate spans for partial success, give each resource its project, normalize, and derive
 * the rows to store. Pure and synchronous; the service resolves projects in PostgreSQL and writes.
 *
 * The project of a resource is decided here by the rule the service passes (the key's or the
 * header's project, else the resource attribute); the service then checks the distinct projects
 * exist before anything is written, so a wrong project is still a 404 with nothing stored.
 */

/** The resource attribute naming the project when neither the key nor the header does. */
export const PROJECT_RESOURCE_ATTRIBUTE = 'lookout.project_id';

export interface PrepareIngestInput {
  body: Uint8Array;
  encoding: OtlpEncoding;
  tenantId: string;
  /** The key's or the header's project; null: each resource names its own. */
  fixedProject: string | null;
  origin: Origin;
  /** INGEST_MAX_FUTURE_SKEW_MS: spans starting further ahead of the clock are rejected (partial success). */
  maxFutureSkewMs?: number;
}

export type PrepareIngestResult =
  /** Not an ExportTraceServiceRequest at all: 400 with this message. */
  | { kind: 'undecodable'; message: string }
  /** A resource with spans names no project: 400. */
  | { kind: 'no_project' }
  | {
      kind: 'prepared';
      acceptedSpans: number;
      rejectedSpans: number;
      errorMessage: string;
      /** Distinct projects the request writes to (or would, when every span was rejected). */
      projects: string[];
      rows: EncodedSpanEventRows;
      traces: TraceNote[];
      /** The traces' preview rows (trace-preview.ts), line i of `traces[i]`. */
      previews: EncodedLines;
    };

function projectsOf(decoded: DecodedExport, fixed: string | null): string[] | null {
  const projects: string[] = [];
  for (const rs of decoded.resourceSpans) {
    if (fixed) {
      projects.push(fixed.toLowerCase());
      continue;
    }
    const value = rs.resource[PROJECT_RESOURCE_ATTRIBUTE];
    if (typeof value !== 'string' || value === '') return null;
    // A project id is a UUID, which PostgreSQL matches in any letter case; ClickHouse compares the
    // text. Stored in its canonical (lowercase) form, or spans sent with an upper-case id would be
    // accepted for the project and then never found by its reads.
    projects.push(value.toLowerCase());
  }
  return projects;
}

/** prepareIngest on the compute pool. */
export const prepareIngestTask = computeTask<PrepareIngestInput, PrepareIngestResult>('prepare-ingest', 'intake');

export function prepareIngest(input: PrepareIngestInput): PrepareIngestResult {
  let decoded: DecodedExport;
  try {
    const body = Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
    decoded = input.encoding === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(otlpJsonText(body));
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { kind: 'undecodable', message: err.message };
    throw err;
  }
  const validation = validateExport(decoded, { maxFutureSkewMs: input.maxFutureSkewMs });
  const base = { acceptedSpans: validation.acceptedSpans, rejectedSpans: validation.rejectedSpans, errorMessage: validation.errorMessage };
  if (validation.acceptedSpans === 0) {
    // Still name the projects, so a wrong one is reported even when every span is invalid.
    const projects = projectsOf(decoded, input.fixedProject);
    if (!projects) return { kind: 'no_project' };
    return { kind: 'prepared', ...base, projects: [...new Set(projects)], rows: emptyEncodedRows(), traces: [], previews: encodeLines([], previewValues) };
  }
  const projects = projectsOf(validation.valid, input.fixedProject);
  if (!projects) return { kind: 'no_project' };
  const spans: NormalizedSpan[] = [];
  validation.valid.resourceSpans.forEach((rs, i) => {
    for (const s of normalizeExport({ resourceSpans: [rs] }, { tenantId: input.tenantId, projectId: projects[i] })) spans.push(s);
  });
  const { rows, traces, previews } = deriveRequestRows(spans, input.origin);
  // Serialized here, not on the event loop (encoded-rows.ts).
  return { kind: 'prepared', ...base, projects: [...new Set(projects)], rows: encodeSpanEventRows(rows), traces, previews: encodeLines(previews, previewValues) };
}

/**
 * Rows for the spans of one request, trace by trace (the tree and fallback agent are per trace), and
 * each trace's preview row (previews[i] is traces[i]'s).
 */
export function deriveRequestRows(spans: NormalizedSpan[], origin: Origin): { rows: SpanEventRows; traces: TraceNote[]; previews: TracePreviewRow[] } {
  const byTrace = new Map<string, NormalizedSpan[]>();
  for (const s of spans) {
    const list = byTrace.get(s.traceId);
    if (list) list.push(s);
    else byTrace.set(s.traceId, [s]);
  }
  const rows: SpanEventRows = { spans: [], generations: [], tools: [], errors: [] };
  const traces: TraceNote[] = [];
  const previews: TracePreviewRow[] = [];
  for (const traceSpans of byTrace.values()) {
    const tree = buildSpanTree(traceSpans);
    const agent = traceAgentName(tree);
    const derived = deriveSpanEventRows(traceSpans, tree, origin, () => agent);
    for (const r of derived.spans) rows.spans.push(r);
    for (const r of derived.generations) rows.generations.push(r);
    for (const r of derived.tools) rows.tools.push(r);
    for (const r of derived.errors) rows.errors.push(r);
    const first = traceSpans[0];
    let earliest = Infinity;
    let latest = -Infinity;
    for (const s of traceSpans) {
      const ms = nsToMs(s.startNs);
      if (ms < earliest) earliest = ms;
      if (ms > latest) latest = ms;
    }
    traces.push({
      tenantId: first.tenantId,
      projectId: first.projectId,
      traceId: first.traceId,
      hasRoot: tree.roots.length > 0,
      origin,
      otelTraceId: first.otelTraceId,
      spanRange: [rows.spans.length - derived.spans.length, rows.spans.length],
      generationRange: [rows.generations.length - derived.generations.length, rows.generations.length],
      spanStartMs: [earliest, latest],
      toolRows: packToolRows(derived.tools),
    });
    previews.push(tracePreviewRow(traceSpans, agent));
  }
  return { rows, traces, previews };
}
