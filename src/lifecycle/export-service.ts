/**
 * The exports (docs/data-lifecycle.md "Getting your data out"): each starts its statement on the
 * analytics lane under the tenant and project guard and resolves once the engine answered its first
 * bytes, with the stream and how to label it. Errors before that are ordinary error answers.
 */
import type { Readable } from 'node:stream';
import type { AppDeps } from '../app/app-deps.js';
import { eventExport, eventExportStatement, exportWindow, type EventExport, type QueryWindow } from '../analytics/query/event-export.js';
import { cutSlices, SLICE_COUNT_SETTINGS, minuteCountStatement, type MinuteCount } from '../analytics/query/export-slices.js';
import { exportFilename, FORMATS, OUTPUT_SETTINGS } from './export-formats.js';
import type { ExportMeta } from './export-response.js';
import type { EventExportQuery, TraceExportQuery } from './export-schemas.js';
import { streamTraceExport } from './trace-export.js';

export interface StartedExport {
  body: Readable;
  meta: ExportMeta;
}

export class ExportService {
  constructor(private readonly deps: Pick<AppDeps, 'ch' | 'compute' | 'config'>) {}

  /**
   * One analytics event's rows of a window, in the format asked for: read in time slices of a bounded
   * number of rows (export-slices.ts), whose answers join into one document (a Parquet file's slices
   * through parquet-join.ts).
   */
  async eventRows(tenantId: string, projectId: string, query: EventExportQuery): Promise<StartedExport> {
    const request = eventExport(query.from, query.start, query.end_exclusive);
    const format = FORMATS[query.format ?? 'ndjson'];
    const scope = { tenantId, projectId };
    const windows = await this.slices(scope, request);
    const output = { ...OUTPUT_SETTINGS, ...format.settings };
    const statements = windows.map((window) => eventExportStatement(this.deps.ch, scope, { event: request.event, window }, output));
    const parts = statements.map((s, i) => ({ statement: s.statement, format: i === 0 ? format.engine : format.later }));
    const body = await this.deps.ch.streamParts(parts, {
      lane: 'analytics',
      scope,
      timeoutSeconds: this.deps.config.exportTimeoutSeconds,
      // Every slice's statement carries the same settings (the window changes only its values).
      settings: statements[0].settings,
      join: format.join,
    });
    return { body, meta: { contentType: format.contentType, filename: exportFilename(request.event.name, request.window, format.extension) } };
  }

  /** The window's slices, from the stored rows per minute (a read on the analytics lane, bounded like a query). */
  private async slices(scope: { tenantId: string; projectId: string }, request: EventExport): Promise<QueryWindow[]> {
    const minutes = await this.deps.ch.read<MinuteCount>(minuteCountStatement(this.deps.ch, scope, request), { lane: 'analytics', scope, settings: SLICE_COUNT_SETTINGS });
    return cutSlices(request.window, minutes.map((m) => ({ minute: m.minute, rows: Number(m.rows) })));
  }

  /** The traces that start in a window, as OTLP/JSON lines. */
  async traces(tenantId: string, projectId: string, query: TraceExportQuery): Promise<StartedExport> {
    const window = exportWindow(query.start, query.end_exclusive);
    const body = await streamTraceExport(this.deps, { tenantId, projectId }, window);
    return { body, meta: { contentType: FORMATS.ndjson.contentType, filename: exportFilename('traces', window, 'otlp.ndjson') } };
  }
}
