import fs from 'node:fs';
import path from 'node:path';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGGED_PROJECTS_COMPLETE } from '../../../src/ingest/settle/logged-projects.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import type { KindStats } from '../../../src/platform/clickhouse/sql/statement-stats.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { agentRun } from '../../helpers/agent-run.js';
import { parseExposition, sampleSum } from '../../helpers/prometheus-text.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';

/**
 * Settle rounds read span_logs only for traces of projects that ever received log records, and
 * that knowledge is shared through PostgreSQL: an instance that only ingests stores GenAI log
 * events, an instance that only settles joins them to their span although it never saw them. The
 * shared ClickHouse store counts its statements per kind (its stats file, written on close),
 * which shows rounds of a project without records reading nothing from span_logs.
 */
const dataDir = tempDataDir('lookout-logged-');
const statsFile = path.join(dataDir, 'engine-stats.json');
let pg: PostgresStore;
let ch: ClickHouseStore;
let ingest: TestService;
let worker: TestService;

beforeAll(async () => {
  // Both stores start migrated, as a service's own would (test/helpers/migrated-stores.ts); a ClickHouse server has its own.
  await copyMigratedStores(dataDir, { postgres: true, clickhouse: !process.env.CLICKHOUSE_URL });
  pg = await openPostgres({ databaseUrl: null, dataDir });
  ch = await openClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir, statsFile });
  const start = (roles: string) => startTestService({ DATABASE_URL: pg.url, LOOKOUT_ROLES: roles }, tempDataDir('lookout-instance-'), { clickhouse: ch });
  worker = await start('api,worker');
  ingest = await start('api,ingest');
}, 120_000);
afterAll(async () => {
  // The test stops the instances and closes ClickHouse itself (the statement counts are written on
  // close); here only what a failure left open.
  for (const svc of [ingest, worker]) await svc?.stop().catch(() => {});
  await ch?.close().catch(() => {});
  await pg?.close();
  for (const svc of [ingest, worker]) if (svc) removeDir(svc.dataDir);
  removeDir(dataDir);
});

async function settleRounds(): Promise<number> {
  return sampleSum(parseExposition((await worker.service.deps.metrics.exposition()).text), 'lookout_settle_rounds_total', { outcome: 'ok' });
}

async function listed(projectId: string, traceId: string): Promise<{ agent_input_display: string | null } | undefined> {
  const res = await worker.call('GET', `/projects/${projectId}/traces?limit=50`);
  return res.body.traces?.find((t: { id: string }) => t.id === traceId);
}

const QUESTION = 'Will the parcel arrive before Friday?';

/** A model call without content on its span, its question sent as a GenAI log event. */
function callWithEvent() {
  const spanExporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'parcels' }), spanProcessors: [new SimpleSpanProcessor(spanExporter)] }).getTracer('logged');
  const start = Date.now() - 3000;
  const span = tracer.startSpan('chat gpt-4o-mini', {
    kind: SpanKind.CLIENT,
    startTime: start,
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 4 },
  });
  const logExporter = new InMemoryLogRecordExporter();
  const logger = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] }).getLogger('logged');
  logger.emit({ eventName: 'gen_ai.user.message', context: trace.setSpan(ROOT_CONTEXT, span), body: { content: QUESTION }, attributes: { 'gen_ai.system': 'openai' } });
  span.end(start + 500);
  return { spans: spanExporter.getFinishedSpans(), logs: ProtobufLogsSerializer.serializeRequest(logExporter.getFinishedLogRecords())!, otelTraceId: span.spanContext().traceId };
}

describe('log records across instances', () => {
  it('rounds of a project without records read no span_logs; records stored by another instance are joined', { timeout: 120_000 }, async () => {
    // The leader (the worker) marks what span_logs held before marks existed: nothing here.
    await waitFor(async () => ((await pg.sql`select 1 from shared_state where name = ${LOGGED_PROJECTS_COMPLETE}`).length > 0 ? true : undefined), 30_000, 'the backfill');

    const quiet = await ingest.newProject('spans only');
    const runs = [agentRun(3), agentRun(4), agentRun(5)];
    for (const run of runs) {
      expect((await postOtlp(ingest.url, ingest.adminKey, protobufBody([run.root, ...run.children]), { headers: { 'x-lookout-project': quiet.id } })).status).toBe(200);
    }
    for (const run of runs) await waitFor(() => listed(quiet.id, lookoutTraceId(quiet.id, run.otelTraceId)), 30_000, 'spans-only traces settled');
    // Every claim finished (after the rounds counted): no round of this project is still to come.
    await waitFor(async () => ((await queueDepth(pg.sql)) === 0 ? true : undefined), 30_000, 'the queue empty');
    const quietRounds = await settleRounds();
    expect(quietRounds).toBeGreaterThanOrEqual(1);

    // The record first, the span after, both through the ingest-only instance.
    const logged = await ingest.newProject('with log events');
    const call = callWithEvent();
    const headers = { 'x-lookout-project': logged.id };
    expect((await postOtlp(ingest.url, ingest.adminKey, call.logs, { headers, path: '/v1/logs' })).status).toBe(200);
    // Marked in PostgreSQL for every instance; the spans-only project is not.
    const marks = await pg.sql<{ name: string }[]>`select name from shared_state where starts_with(name, 'span_logs:')`;
    expect(marks.map((m) => m.name.split(':')[2])).toEqual([logged.id]);
    expect((await postOtlp(ingest.url, ingest.adminKey, protobufBody(call.spans), { headers })).status).toBe(200);
    const traceId = lookoutTraceId(logged.id, call.otelTraceId);
    const settled = await waitFor(async () => {
      const t = await listed(logged.id, traceId);
      return t?.agent_input_display === QUESTION ? t : undefined;
    }, 60_000, 'the trace settled with its log event joined');
    expect(settled.agent_input_display).toBe(QUESTION);
    for (const svc of [ingest, worker]) await svc.stop();
    const allRounds = await settleRounds();
    await ch.close();
    const kinds = (JSON.parse(fs.readFileSync(statsFile, 'utf8')) as { kinds: Record<string, KindStats> }).kinds;
    const logReads = kinds['ingest select span_logs']?.statements ?? 0;
    // The project with records was read for; the rounds before it, of the spans-only project, never were.
    expect(logReads).toBeGreaterThanOrEqual(1);
    expect(logReads).toBeLessThanOrEqual(allRounds - quietRounds);
  });
});
