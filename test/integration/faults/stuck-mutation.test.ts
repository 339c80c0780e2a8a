import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { readTraceSpansBytes, storedRowsFromBytes } from '../../../src/spans/stored-spans.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';

/**
 * An `ALTER … UPDATE` of a `spans` column that the duplicate check and the read-back select
 * (parent_span_id), whose expression throws for some rows, stays unfinished for good (the engine
 * retries it). Reads with pending mutations applied (apply_mutations_on_fly) evaluate it
 * and fail: the writer's duplicate check and settling's read-back among them. They then read
 * without the setting, so ingest answers 200, a re-send is still recognised as stored, and a
 * trace's spans are read back — until an operator kills the mutation (KILL MUTATION), after which
 * the reads apply pending mutations again.
 */

let svc: TestService;
let project: { id: string };
const held = 'stuck update for the test';

beforeAll(async () => {
  svc = await startTestService();
  project = await svc.newProject('stuck mutation');
});
afterAll(async () => {
  await svc?.stop();
});

async function post(body: string): Promise<number> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
    body,
  });
  await res.text();
  return res.status;
}

/** Failed statements of the ingest lane so far (lookout_clickhouse_statement_errors_total). */
async function ingestLaneErrors(): Promise<number> {
  const { values } = await svc.service.deps.metrics.statementErrors.get();
  return values.filter((v) => v.labels.lane === 'ingest').reduce((sum, v) => sum + v.value, 0);
}

describe('a mutation that cannot apply, stuck on spans', () => {
  it('does not stop ingest or settling: their reads fall back to reading without pending mutations, until it is killed', async () => {
    const { ch } = svc.service.deps;
    const run = agentRunRequest({ start: new Date(Date.now() - 60_000), agent: 'stuck', generations: [{ model: 'gpt-4o', input: 10, output: 1 }], tools: [{ name: 'lookup' }] });
    expect(await post(run.body)).toBe(200);
    const tenantId = svc.service.bootstrap!.tenantId;
    const key = { tenantId, projectId: project.id, traceId: lookoutTraceId(project.id, run.traceId) };
    const spanRows = async () => {
      const [row] = await ch.read<{ rows: string; spans: string }>(
        sql`SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${raw(ch.table('spans'))} WHERE project_id = ${param('String', project.id)}`,
        { lane: 'system' },
      );
      return { rows: Number(row.rows), spans: Number(row.spans) };
    };
    const stored = await spanRows();
    expect(stored.rows).toBe(3);

    await ch.client.command({
      query: `ALTER TABLE ${ch.table('spans')} UPDATE parent_span_id = concat(parent_span_id, toString(throwIf(span_id != '', '${held}'))) WHERE project_id = {p:String}`,
      query_params: { p: project.id },
      clickhouse_settings: { mutations_sync: '0' },
    });
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    try {
      // The failure reproduced: a read of the project's spans with pending mutations applied throws.
      await expect(
        ch.read(sql`SELECT max(parent_span_id = '') AS has_root FROM ${raw(ch.table('spans'))} WHERE project_id = ${param('String', project.id)}`, {
          lane: 'system',
          settings: { apply_mutations_on_fly: 1 },
        }),
      ).rejects.toThrow(held);
      const errorsBefore = await ingestLaneErrors();

      // The re-send: its duplicate check reads the trace's stored spans. Answered 200, nothing written twice.
      expect(await post(run.body)).toBe(200);
      expect(await spanRows()).toEqual(stored);
      // The failed reads are counted with the other failed statements.
      expect(await ingestLaneErrors()).toBeGreaterThan(errorsBefore);

      // Settling's read-back answers the trace's spans; the first fallback is logged, once.
      for (let i = 0; i < 2; i++) {
        const rows = storedRowsFromBytes(await readTraceSpansBytes(ch, [key], logger)).filter((r) => r.trace_id === key.traceId);
        expect(rows).toHaveLength(3);
      }
      expect(lines.filter((l) => /made without them/.test(l.msg))).toHaveLength(1);
      // The mutation is still there, undone: the reads went on beside it.
      const [mutation] = await ch.read<{ is_done: number; latest_fail_reason: string }>(
        sql`SELECT is_done, latest_fail_reason FROM system.mutations WHERE database = ${param('String', ch.database)} AND position(command, ${param('String', held)}) > 0`,
        { lane: 'system' },
      );
      expect(Number(mutation.is_done)).toBe(0);
    } finally {
      // The operator's action (docs/operations.md).
      await ch.client.command({ query: `KILL MUTATION WHERE database = {d:String} AND position(command, {h:String}) > 0 SYNC`, query_params: { d: ch.database, h: held } });
    }
    // Killed: reads apply pending mutations again, and the log says so.
    const rows = storedRowsFromBytes(await readTraceSpansBytes(ch, [key], logger)).filter((r) => r.trace_id === key.traceId);
    expect(rows).toHaveLength(3);
    expect(lines.filter((l) => /work again/.test(l.msg))).toHaveLength(1);
    expect(await post(run.body)).toBe(200);
    expect(await spanRows()).toEqual(stored);
  }, 120_000);
});
