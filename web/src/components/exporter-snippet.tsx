/**
 * How to send a first trace: OTLP/HTTP to this service's origin (POST
 * /v1/traces at the root, so OTEL_EXPORTER_OTLP_ENDPOINT is the bare origin), with an ingest key and
 * the project named in the x-lookout-project header. OTEL_EXPORTER_OTLP_HEADERS values are
 * URL-encoded, hence Bearer%20.
 */
export function ExporterSnippet({ projectId }: { projectId: string }) {
  const origin = window.location.origin;
  const env = [
    `OTEL_EXPORTER_OTLP_ENDPOINT=${origin}`,
    `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`,
    `OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<ingest key>,x-lookout-project=${projectId}`,
  ].join('\n');
  const curl = [
    `curl -X POST ${origin}/v1/traces \\`,
    `  -H 'Authorization: Bearer <ingest key>' \\`,
    `  -H 'x-lookout-project: ${projectId}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  --data @trace.json   # an OTLP/JSON ExportTraceServiceRequest`,
  ].join('\n');
  return (
    <section class="panel exporter-snippet" data-testid="exporter-snippet" aria-labelledby="send-first-trace">
      <h2 id="send-first-trace">No traces yet: send one</h2>
      <p>
        Point any OpenTelemetry exporter at this service. Traces go to <code>{origin}/v1/traces</code> (OTLP/HTTP, protobuf or JSON) with an{' '}
        <strong>ingest</strong>-scoped API key and this project's id in the <code>x-lookout-project</code> header.
      </p>
      <pre tabIndex={0}>
        <code>{env}</code>
      </pre>
      <p>Or by hand:</p>
      <pre tabIndex={0}>
        <code>{curl}</code>
      </pre>
      <p class="muted">
        An admin creates an ingest key with <code>POST /api/api-keys {'{"name":"agent","scope":"ingest","project_id":"' + projectId + '"}'}</code>. To see sample data, run{' '}
        <code>npm run demo</code>.
      </p>
    </section>
  );
}
