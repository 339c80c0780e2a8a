/**
 * The exports (docs/data-lifecycle.md "Getting your data out"): each starts its statement on the
 * analytics lane under the tenant and project guard and resolves once the engine answered its first
 * bytes, with the stream and how to label it. Errors before that are ordinary error answers.
 */
import type { Readable } from 'node:stream';
import type { AppDeps } from '../app/app-deps.js';
import { eventExport, eventExportStatement, exportWindow } from '../analytics/query/event-export.js';
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

  /** One analytics event's rows of a window, in the format asked for. */
  async eventRows(tenantId: string, projectId: string, query: EventExportQuery): Promise<StartedExport> {
    const request = eventExport(query.from, query.start, query.end_exclusive);
    const format = FORMATS[query.format ?? 'ndjson'];
    const { statement, settings } = eventExportStatement(this.deps.ch, { tenantId, projectId }, request, OUTPUT_SETTINGS);
    const body = await this.deps.ch.stream(statement, format.engine, {
      lane: 'analytics',
      scope: { tenantId, projectId },
      timeoutSeconds: this.deps.config.exportTimeoutSeconds,
      settings,
    });
    return { body, meta: { contentType: format.contentType, filename: exportFilename(request.event.name, request.window, format.extension) } };
  }

  /** The traces that start in a window, as OTLP/JSON lines. */
  async traces(tenantId: string, projectId: string, query: TraceExportQuery): Promise<StartedExport> {
    const window = exportWindow(query.start, query.end_exclusive);
    const body = await streamTraceExport(this.deps, { tenantId, projectId }, window);
    return { body, meta: { contentType: FORMATS.ndjson.contentType, filename: exportFilename('traces', window, 'otlp.ndjson') } };
  }
}
