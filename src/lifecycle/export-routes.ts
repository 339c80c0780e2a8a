import { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import type { LookoutModule } from '../app/module.js';
import { defineRoute } from '../app/route.js';
import { sendExport } from './export-response.js';
import { EventExportQuery, TraceExportQuery } from './export-schemas.js';
import { ExportService } from './export-service.js';

/**
 * Getting data out (docs/data-lifecycle.md "Getting your data out"): an analytics event's rows, or
 * a window's traces as OTLP/JSON lines, streamed as downloads. Both read on the analytics lane (its
 * slots, per-tenant share and queue) under the tenant and project guard; a `read` key suffices.
 * Each holds its slot while it streams, bounded by EXPORT_TIMEOUT_SECONDS.
 */
export function exportRoutes(deps: AppDeps): Router {
  const router = Router();
  const exports = new ExportService(deps);

  defineRoute<unknown, EventExportQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/export', tag: 'data lifecycle', scope: 'read', projectParam: true,
    summary: "Download one analytics event's rows of a window (`timestamp`, then every catalog field) as NDJSON, CSV or Parquet, streamed",
    query: EventExportQuery,
    responses: { 200: { description: 'The rows: application/x-ndjson, text/csv or application/vnd.apache.parquet (a download; a failure after the first byte aborts it)' } },
    handler: async ({ tenantId, project, query, res }) => {
      const started = await exports.eventRows(tenantId, project.id, query);
      await sendExport(res, started.body, started.meta);
      return undefined;
    },
  });

  defineRoute<unknown, TraceExportQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/export/traces', tag: 'data lifecycle', scope: 'read', projectParam: true,
    summary: 'Download the traces that start in a window, with all their spans, as OTLP/JSON lines (one ExportTraceServiceRequest per trace), replayable into POST /v1/traces',
    query: TraceExportQuery,
    responses: { 200: { description: 'application/x-ndjson: one OTLP/JSON ExportTraceServiceRequest per line (a download; a failure after the first byte aborts it)' } },
    handler: async ({ tenantId, project, query, res }) => {
      const started = await exports.traces(tenantId, project.id, query);
      await sendExport(res, started.body, started.meta);
      return undefined;
    },
  });

  return router;
}

/** The feature module for src/app/modules.ts. */
export const exportModule: LookoutModule = {
  name: 'export',
  api: exportRoutes,
};
