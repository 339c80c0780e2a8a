/**
 * A span re-sent with other content before its trace settles (an exporter that rebuilt its batch,
 * a buggy retry): the writer stores the first copy only, so the trace's summary must count that
 * copy too. The settler summarizes such a trace from this process's memory (the settle cache); it
 * used to hold the re-sent copy instead, so trace.processed counted tokens no generation row had.
 * Real stores, through the service.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { statementKind } from '../../../src/platform/clickhouse/sql/statement-stats.js';
import { agentRun } from '../../helpers/agent-run.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { jsonBody, postOtlp, waitFor } from './otlp-client.js';

let svc: TestService;
let opened: ClickHouseStore;
let dataDir: string;
let projectId: string;
/** The settler's read-backs of spans (traces it did not summarize from memory). */
let readBacks = 0;

beforeAll(async () => {
  dataDir = tempDataDir('lookout-resent-');
  // The store opened here starts migrated, as the service's own would (test/helpers/migrated-stores.ts).
  await copyMigratedStores(dataDir, { postgres: false, clickhouse: true });
  opened = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir });
  const ch: ClickHouseStore = {
    ...opened,
    readBytes: (statement, options) => {
      if (statementKind(options.lane, statement) === 'ingest select spans') readBacks++;
      return opened.readBytes(statement, options);
    },
  };
  // Long enough for both requests to arrive before the trace settles.
  svc = await startTestService({ TRACE_SETTLE_MS: '1500', TRACE_MAX_WAIT_MS: '30000' }, dataDir, { clickhouse: ch });
  projectId = (await svc.newProject('resent')).id;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await opened?.close();
  if (dataDir) removeDir(dataDir);
});

async function send(spans: ReadableSpan[]): Promise<number> {
  return (await postOtlp(svc.url, svc.adminKey, jsonBody(spans), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } })).status;
}

async function one(query: string, traceId: string): Promise<Record<string, number>> {
  const result = await opened.client.query({ query, query_params: { t: traceId }, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return (await result.json<Record<string, number>>())[0];
}

describe('a span re-sent with other content before its trace settles', () => {
  it('is summarized as stored: the first copy', async () => {
    const run = agentRun(2, 'resent-agent');
    const traceId = lookoutTraceId(projectId, run.otelTraceId);
    expect(await send([run.root, ...run.children])).toBe(200);
    // The same span, its usage changed: a duplicate, not stored again.
    const first = run.children[0];
    const changed = Object.create(first, { attributes: { value: { ...first.attributes, 'gen_ai.usage.input_tokens': 5000, 'gen_ai.usage.output_tokens': 700 } } }) as ReadableSpan;
    expect(await send([changed])).toBe(200);
    await waitFor(
      async () => ((await one(`SELECT count() AS n FROM ${opened.table('event_trace_processed')} WHERE trace_id = {t:String}`, traceId)).n >= 1 && (await queueDepth(svc.service.deps.sql)) === 0 ? true : undefined),
      30_000,
      'trace settled',
    );
    const generations = await one(`SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM ${opened.table('event_generation_completed')} FINAL WHERE trace_id = {t:String}`, traceId);
    expect(generations).toEqual({ input: 20, output: 4 });
    const processed = await one(`SELECT input_tokens AS input, output_tokens AS output FROM ${opened.table('event_trace_processed')} FINAL WHERE trace_id = {t:String}`, traceId);
    expect(processed).toEqual(generations);
    // Summarized from memory: the path that held the re-sent copy.
    expect(readBacks).toBe(0);
  }, 60_000);
});
