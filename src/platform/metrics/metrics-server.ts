import http from 'node:http';
import type { Metrics } from './metrics.js';

/**
 * The metrics listener: `GET /metrics` in Prometheus text exposition on its own port and address
 * (METRICS_PORT, METRICS_HOST), apart from the API, so the metrics are never reachable where the
 * API is published and a scrape never waits behind API traffic's middleware or keys.
 */
export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: Metrics, host: string, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
