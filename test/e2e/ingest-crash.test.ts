import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lookoutTraceId } from '../../src/spans/trace-id.js';
import { BOOTSTRAP_KEY, removeDir, spawnService, type SpawnedService } from '../helpers/service.js';
import { tempDataDir } from '../helpers/temp-dir.js';
import { postOtlp, protobufBody, waitFor } from '../integration/ingest/otlp-client.js';

/**
 * Crash safety (a 200 means the spans are durable): senders load a service
 * running as a child process, the process is SIGKILLed mid-load, and after a restart on the same
 * DATA_DIR every span that was answered 200 is there — and its trace gets processed from the settle
 * queue, attributed to its sender like a trace settled without a crash.
 */

const dataDir = tempDataDir('lookout-crash-');
let current: SpawnedService | null = null;

/** The embedded PostgreSQL a killed service leaves running (the restart reuses it); stopped by its pid. */
function stopOrphanPostgres(): void {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 'SIGINT');
  } catch {
    // already gone
  }
}

afterAll(async () => {
  if (current) await current.stop();
  stopOrphanPostgres();
  await new Promise((r) => setTimeout(r, 500));
  removeDir(dataDir);
});

const tracer = (() => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'crash-load' }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('crash'), exporter };
})();

/** One batch: `traces` traces of 10 spans (root + 9 children). */
function batch(traces: number, agent = 'crash-agent'): { spans: ReadableSpan[]; ids: { otelTraceId: string; spanIds: string[] }[] } {
  tracer.exporter.reset();
  const ids: { otelTraceId: string; spanIds: string[] }[] = [];
  for (let t = 0; t < traces; t++) {
    const root = tracer.tracer.startSpan(`invoke_agent ${agent}`, { attributes: { 'gen_ai.agent.name': agent } });
    const ctx = trace.setSpan(ROOT_CONTEXT, root);
    for (let i = 0; i < 9; i++) {
      tracer.tracer
        .startSpan(`chat step ${i}`, { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 2 } }, ctx)
        .end();
    }
    root.end();
    ids.push({ otelTraceId: root.spanContext().traceId, spanIds: [] });
  }
  const spans = tracer.exporter.getFinishedSpans().slice();
  for (const s of spans) ids.find((i) => i.otelTraceId === s.spanContext().traceId)!.spanIds.push(s.spanContext().spanId);
  return { spans, ids };
}

describe('crash safety', () => {
  it('keeps every span answered 200 across a SIGKILL during load', { timeout: 240_000 }, async () => {
    // A long quiet period: most acknowledged traces are still unsettled when the process dies.
    current = await spawnService(dataDir, { TRACE_SETTLE_MS: '5000' });
    const created = await fetch(`${current.url}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'crash' }),
    });
    const project = (await created.json()) as { id: string };
    const url = current.url;

    const acknowledged: { otelTraceId: string; spanIds: string[] }[] = [];
    let stop = false;
    let failures = 0;
    const sender = async () => {
      // Bounded: at most 200 requests per sender, and it stops when the service dies.
      for (let n = 0; n < 200 && !stop; n++) {
        const { spans, ids } = batch(20);
        try {
          const res = await postOtlp(url, BOOTSTRAP_KEY, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
          if (res.status === 200) acknowledged.push(...ids);
        } catch {
          failures++;
          return;
        }
      }
    };
    const senders = Array.from({ length: 4 }, sender);
    // Kill once a fair amount is acknowledged and requests are in flight.
    await waitFor(async () => (acknowledged.length >= 200 ? true : undefined), 60_000, 'load acknowledged');
    const settledBeforeKill = await processedCount(url, project.id);
    await current.kill();
    stop = true;
    await Promise.all(senders);
    expect(failures).toBeGreaterThan(0);

    current = await spawnService(dataDir, { TRACE_SETTLE_MS: '300' });
    const restarted = current;
    const get = async (p: string) => {
      const res = await fetch(`${restarted.url}/api${p}`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } });
      return { status: res.status, body: (await res.json()) };
    };
    // Every acknowledged span is stored.
    for (const t of acknowledged) {
      const res = await get(`/traces/${lookoutTraceId(project.id, t.otelTraceId)}?include_attributes=false&include_events=false`);
      expect(res.status).toBe(200);
      expect(res.body.spans.map((s: { otel_span_id: string }) => s.otel_span_id).sort()).toEqual([...t.spanIds].sort());
      expect(res.body.stats.total_tokens).toBe(9 * 12);
    }
    // And recovery settles them: each acknowledged trace gets its summary row.
    const want = new Set(acknowledged.map((t) => lookoutTraceId(project.id, t.otelTraceId)));
    await waitFor(async () => {
      const seen = new Set<string>();
      let cursor: string | null = null;
      do {
        const page = await get(`/projects/${project.id}/traces?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        for (const t of page.body.traces) seen.add(t.id);
        cursor = page.body.next_cursor;
      } while (cursor);
      return [...want].every((id) => seen.has(id)) ? true : undefined;
    }, 150_000, 'acknowledged traces processed after restart');
    expect(want.size).toBeGreaterThan(settledBeforeKill);

    // One trace settled normally after the restart, by the same sender.
    const normal = batch(1, 'normal-agent');
    expect((await postOtlp(restarted.url, BOOTSTRAP_KEY, protobufBody(normal.spans), { headers: { 'x-lookout-project': project.id } })).status).toBe(200);
    const normalOrigin = await waitFor(async () => {
      const rows = await origins(restarted.url, project.id, 'normal-agent');
      return rows.length === 1 ? rows[0] : undefined;
    }, 30_000, 'normal trace processed');
    expect(normalOrigin.surface).toBe('otlp');
    expect(normalOrigin.api_key_id).not.toBe('');
    // Every processed trace — those settled from the queue after the restart included — carries that sender.
    expect(await origins(restarted.url, project.id)).toEqual([normalOrigin]);
  });
});

/** trace.processed rows of the last hour through the analytics API. */
async function analytics(url: string, projectId: string, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const second = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const res = await fetch(`${url}/api/projects/${projectId}/analytics/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'trace.processed', start: second(Date.now() - 3_600_000), end_exclusive: second(Date.now() + 3_600_000), ...body }),
  });
  if (res.status !== 200) throw new Error(`analytics query answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { rows: Record<string, unknown>[] }).rows;
}

async function processedCount(url: string, projectId: string): Promise<number> {
  const [row] = await analytics(url, projectId, { measures: [{ as: 'traces', agg: 'count' }] });
  return Number(row?.traces ?? 0);
}

/** Distinct (surface, api_key_id) of processed traces, of one agent's when given. */
async function origins(url: string, projectId: string, agent?: string): Promise<{ surface: string; api_key_id: string }[]> {
  const rows = await analytics(url, projectId, {
    measures: [{ as: 'traces', agg: 'count' }],
    group_by: [{ field: 'surface' }, { field: 'api_key_id' }],
    ...(agent ? { filters: [{ field: 'agent_name', op: 'eq', value: agent }] } : {}),
  });
  return rows.map((r) => ({ surface: String(r.surface), api_key_id: String(r.api_key_id) }));
}
