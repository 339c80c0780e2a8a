/**
 * The largest settle round against a real ClickHouse server (the `server` test project): a round
 * claims SETTLE_ROUND_TRACES traces and reads their spans back in one statement whose trace-id set
 * alone is larger than the server's limit on one request parameter (http_max_field_value_size,
 * 128 KiB by default). Values past that go into the statement's text (compile.ts), so the round
 * settles instead of failing on every retry.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTLE_ROUND_TRACES } from '../../../src/ingest/settle/trace-settler.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from '../ingest/otlp-client.js';

const FIELD_LIMIT = 128 * 1024;
let svc: TestService;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  // The settle cache holds nothing: every round reads its traces' spans back from ClickHouse. The quiet
  // period outlasts the burst's ingest, so its traces fall due together and one round claims them.
  svc = await startTestService({ TRACE_SETTLE_MS: '8000', TRACE_MAX_WAIT_MS: '60000', SETTLE_CACHE_MAX_BYTES: '1' }, dataDir);
});

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/** One OTLP/JSON request with `count` single-span traces. */
function tracesRequest(count: number, start: number): string {
  const spans = Array.from({ length: count }, (_, i) => ({
    traceId: hex(16), spanId: hex(8), name: `agent ${i}`, kind: 1,
    startTimeUnixNano: String(BigInt(start + i) * 1_000_000n), endTimeUnixNano: String(BigInt(start + i + 5) * 1_000_000n),
    attributes: [{ key: 'gen_ai.agent.name', value: { stringValue: 'burst' } }], status: {},
  }));
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'burst' } }] }, scopeSpans: [{ scope: { name: 't' }, spans }] }] });
}

describe('settling on a ClickHouse server', () => {
  it('runs on the server', () => {
    expect(svc.service.deps.ch.embedded).toBe(false);
    expect(svc.service.deps.ch.binding).toBe('server');
  });

  it('binds a value larger than the server takes as one parameter in the statement text, and the server answers', async () => {
    const { ch } = svc.service.deps;
    const ids = Array.from({ length: 20_000 }, () => hex(16));
    const statement = sql`SELECT count() AS n FROM ${raw(ch.table('spans'))} WHERE trace_id IN ${param('Array(String)', ids)} OR ${param('String', 'x')} = 'x'`;
    // Sent as one parameter this would be refused (HTML Form Exception: Field value too long).
    expect(await ch.read<{ n: number }>(statement, { lane: 'ingest' })).toEqual([{ n: 0 }]);
    const compiled = compile(statement, 'server');
    expect(Object.values(compiled.params)).toEqual(['x']);
    expect(compiled.sql.length).toBeGreaterThan(4 * FIELD_LIMIT);
    const small = compile(sql`SELECT ${param('Array(String)', ids.slice(0, 10))}`, 'server');
    expect(Object.keys(small.params)).toHaveLength(1);
  });

  it(`settles a burst of ${SETTLE_ROUND_TRACES} traces due together: the largest round, read back in one statement`, async () => {
    const project = await svc.newProject('burst');
    const start = Date.now() - 60_000;
    const answer = await postOtlp(svc.url, svc.adminKey, tracesRequest(SETTLE_ROUND_TRACES, start), {
      contentType: 'application/json',
      headers: { 'x-lookout-project': project.id },
    });
    expect(answer.status).toBe(200);
    const { ch } = svc.service.deps;
    const processed = async () => {
      const result = await ch.client.query({
        query: `SELECT uniqExact(trace_id) AS n FROM ${ch.table('event_trace_processed')} WHERE project_id = {p:String}`,
        query_params: { p: project.id },
        format: 'JSONEachRow',
      });
      return Number((await result.json<{ n: string }>())[0].n);
    };
    await waitFor(async () => ((await processed()) === SETTLE_ROUND_TRACES ? true : undefined), 180_000, 'every trace settled');
    // The round's span read went as one statement longer than a parameter may be: what failed before.
    await ch.client.command({ query: 'SYSTEM FLUSH LOGS' });
    const longest = await ch.client.query({
      query: `SELECT max(length(query)) AS n FROM system.query_log
              WHERE type = 'QueryFinish' AND has(databases, {db:String}) AND position(query, {read:String}) > 0`,
      // The server logs the statement as it formats it: unquoted names, the guard in parentheses.
      query_params: { db: ch.database, read: `FROM ${ch.database}.spans WHERE (tenant_id IN ` },
      format: 'JSONEachRow',
    });
    expect(Number((await longest.json<{ n: string }>())[0].n)).toBeGreaterThan(FIELD_LIMIT);
    // The round writes trace.processed before the traces summaries (trace-settler.ts), so the
    // list may lag the count above by one insert: wait for it rather than read it once.
    const listed = await waitFor(async () => {
      const list = await svc.call('GET', `/projects/${project.id}/traces?limit=5`);
      expect(list.status).toBe(200);
      return list.body.traces.length === 5 ? list.body.traces : undefined;
    }, 30_000, 'the burst listed');
    expect(listed.map((t: { agent_name: string }) => t.agent_name)).toEqual(Array(5).fill('burst'));
  });
});
