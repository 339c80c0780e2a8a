import net from 'node:net';
import grpc from '@grpc/grpc-js';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';

/**
 * OTLP/gRPC as `npm start` runs it (src/main.ts in a child process): OTLP_GRPC_PORT opens it in a
 * process with the `ingest` role, 0 or a process without that role has none, SIGTERM closes it.
 */

let svc: SpawnedService | null = null;
let dataDir: string | null = null;
afterEach(async () => {
  await svc?.stop();
  svc = null;
  if (dataDir) removeDir(dataDir);
  dataDir = null;
});

/** A port nothing listens on right now (the OS's pick, released at once). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function exportTo(port: number, projectId = 'none'): Promise<ExportResult> {
  const provider = new InMemorySpanExporter();
  runGenAiSupportAgent(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(provider)] }).getTracer('process'));
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${BOOTSTRAP_KEY}`);
  metadata.set('x-lookout-project', projectId);
  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}`, metadata, timeoutMillis: 30_000 });
  try {
    return await new Promise<ExportResult>((resolve) => exporter.export(provider.getFinishedSpans(), resolve));
  } finally {
    await exporter.shutdown();
  }
}

const listening = (output: string) => JSON.parse(output.split('\n').find((l) => l.includes('lookout listening'))!);

describe('OTLP/gRPC in the service process', () => {
  it('listens on OTLP_GRPC_PORT, says so at start, takes exports, and exits cleanly on SIGTERM', async () => {
    const port = await freePort();
    dataDir = tempDataDir();
    svc = await spawnService(dataDir, { OTLP_GRPC_PORT: String(port) });
    expect(listening(svc.output()).otlpGrpcPort).toBe(port);
    expect(svc.output()).toContain(`· OTLP/gRPC localhost:${port}`);
    // A project for the bootstrap key to send to.
    const created = await fetch(`${svc.url}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'grpc process' }),
    });
    expect(created.status).toBe(201);
    const projectId = ((await created.json()) as { id: string }).id;
    expect((await exportTo(port, projectId)).code).toBe(ExportResultCode.SUCCESS);
    const child = svc;
    svc = null;
    expect(await child.stop()).toBe(0);
    // Closed with the process: nothing listens there any more.
    expect(grpc.status[((await exportTo(port, projectId)).error as grpc.ServiceError).code]).toBe('UNAVAILABLE');
  }, 120_000);

  it('has no OTLP/gRPC with OTLP_GRPC_PORT=0, nor in a process without the ingest role', async () => {
    dataDir = tempDataDir();
    svc = await spawnService(dataDir, { OTLP_GRPC_PORT: '0' });
    expect(listening(svc.output()).otlpGrpcPort).toBeNull();
    expect(svc.output()).not.toContain('OTLP/gRPC');
    expect(await svc.stop()).toBe(0);
    svc = null;

    const port = await freePort();
    svc = await spawnService(dataDir, { OTLP_GRPC_PORT: String(port), LOOKOUT_ROLES: 'api,worker' });
    expect(listening(svc.output()).otlpGrpcPort).toBeNull();
    const result = await exportTo(port);
    expect(grpc.status[(result.error as grpc.ServiceError).code]).toBe('UNAVAILABLE');
  }, 180_000);
});
