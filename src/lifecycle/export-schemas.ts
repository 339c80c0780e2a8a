/**
 * The export routes' query parameters, declared once as TypeBox schemas (the OpenAPI document, the
 * route's ajv validator and the handler's types). Formats, events and windows are checked again by
 * the service with the query language's own detail strings.
 */
import { Type, type Static } from 'typebox';
import { LIMITS } from '../analytics/catalog.js';
import { stringEnum } from '../platform/http/shape-kit.js';

export const EXPORT_FORMATS = ['ndjson', 'csv', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const instant = (description: string) => Type.String({ description: `${description} ISO 8601 UTC at a whole second, e.g. 2026-11-01T00:00:00Z.` });

/** Required, but checked by the query language's window rules (not ajv), so the details match its answers. */
const WINDOW = {
  start: Type.Optional(instant('Window start, inclusive. Required.')),
  end_exclusive: Type.Optional(instant(`Window end, exclusive; at most ${LIMITS.max_window_days} days after start. Required.`)),
};

export const EventExportQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'The analytics event as the catalog names it (GET /projects/{project_id}/analytics/catalog), e.g. generation.completed. Required.' })),
  ...WINDOW,
  format: Type.Optional(stringEnum(EXPORT_FORMATS, { description: 'ndjson (default; one JSON object per line), csv (a header line, then rows) or parquet.' })),
});
export type EventExportQuery = Static<typeof EventExportQuery>;

export const TraceExportQuery = Type.Object(WINDOW);
export type TraceExportQuery = Static<typeof TraceExportQuery>;
