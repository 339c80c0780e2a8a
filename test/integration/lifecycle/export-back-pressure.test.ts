import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { until } from './deletion-harness.js';

/**
 * An export is read from ClickHouse only as fast as its client takes it (docs/data-lifecycle.md
 * "Getting your data out"): while the client reads nothing, the engine's statement stays running
 * with the rows it read so far a bounded part of the window, rather than running to its end into
 * the service's memory; once the client reads again every row arrives. Against the real engine
 * (and, in the `server` test project, a real server), watched through the engine's own list of
 * running statements (system.processes).
 */
let svc: TestService;
let projectId: string;
const ROWS = 1_000_000;
const HOUR = 3_600_000;
const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('back-pressure')).id;
  const ch = svc.service.deps.ch;
  // Seeded inside the engine: a million rows in one hour, far more than every buffer between engine and client holds.
  await ch.client.command({
    query: `INSERT INTO ${ch.table('event_generation_completed')}
              (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id,
               duration_ms, input_tokens, output_tokens, cached_input_tokens, tps, error)
            SELECT {tenant:String}, {project:String}, fromUnixTimestamp64Milli(toInt64({base:Int64} + number % ${HOUR}), 'UTC'),
                   'api_key', 'api', '', '', 'gpt-4o', 'openai', generateUUIDv4(number), cityHash64(number), 100, 500, 50, 0, NULL, 0
            FROM numbers(${ROWS})`,
    query_params: { tenant: svc.service.bootstrap!.tenantId, project: projectId, base },
  });
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

/** The export's statement as the engine lists it while it runs: rows read so far; undefined when none runs. */
async function runningExport(): Promise<number | undefined> {
  const result = await svc.service.deps.ch.client.query({
    query: `SELECT read_rows FROM system.processes WHERE query LIKE '%event_generation_completed%' AND query NOT LIKE '%system.processes%' AND query NOT LIKE '%count()%'`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ read_rows: string | number }>();
  return rows.length === 0 ? undefined : Number(rows[0].read_rows);
}

it('pauses the engine while the client reads nothing, then delivers every row', async () => {
  const url = `${svc.api}/projects/${projectId}/export?${new URLSearchParams({ from: 'generation.completed', start: iso(base), end_exclusive: iso(base + HOUR), format: 'ndjson' })}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${svc.adminKey}` } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let bytes = 0;
  let lines = 0;
  const take = (chunk: Uint8Array) => {
    bytes += chunk.byteLength;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  };
  const first = await reader.read();
  expect(first.done).toBe(false);
  take(first.value!);

  // The client now reads nothing: every buffer on the way fills, then the statement stops reading.
  let previous = -1;
  const stalled = await until('the export statement to stop reading rows', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await runningExport();
    if (now === undefined) throw new Error('the export statement is no longer running: its rows went somewhere other than the client');
    const same = now === previous;
    previous = now;
    return same ? now : undefined;
  });
  // Bounded read-ahead: the engine's blocks in flight and the sockets' buffers, not the window.
  expect(stalled).toBeGreaterThan(0);
  expect(stalled).toBeLessThan(ROWS / 2);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect(await runningExport()).toBe(stalled);

  for (let next = await reader.read(); !next.done; next = await reader.read()) take(next.value);
  expect(lines).toBe(ROWS);
  expect(bytes).toBeGreaterThan(ROWS * 100);
  await until('the export to give its slot back', async () => svc.service.deps.ch.gates.analytics.load.running === 0);
  expect(await runningExport()).toBeUndefined();
}, 180_000);
