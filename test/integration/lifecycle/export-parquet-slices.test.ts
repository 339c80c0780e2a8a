import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findEvent } from '../../../src/analytics/catalog.js';
import { eventExportStatement } from '../../../src/analytics/query/event-export.js';
import { FORMATS, OUTPUT_SETTINGS } from '../../../src/lifecycle/export-formats.js';
import { joinParquet } from '../../../src/lifecycle/parquet-join.js';
import { startTestService, type TestService } from '../../helpers/service.js';

/**
 * A Parquet export read in slices (docs/data-lifecycle.md "Getting your data out"): a window of
 * three UTC days is three statements, each writing a Parquet file, joined into one file that the
 * engine reads back (its own Parquet reader, `file()`) with exactly the rows and columns of one
 * statement over the whole window, and whose footer lists every slice's row groups; a slice's
 * statement starts only once the reader took the slice before. Against the real engine; in the
 * `server` test project against a real server.
 */
let svc: TestService;
let projectId: string;
const DAY = 86_400_000;
const ROWS = 240_000;
const start = Math.floor(Date.now() / DAY) * DAY - 4 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const window = { start: new Date(start), endExclusive: new Date(start + 3 * DAY) };

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('parquet-slices')).id;
  const ch = svc.service.deps.ch;
  // Three inserts, each over the three days: several stored parts per day, every column varied, tps null at times.
  for (let part = 0; part < 3; part++) {
    await ch.client.command({
      query: `INSERT INTO ${ch.table('event_generation_completed')}
                (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id,
                 duration_ms, input_tokens, output_tokens, cached_input_tokens, tps, error)
              SELECT {tenant:String}, {project:String}, fromUnixTimestamp64Milli(toInt64({start:Int64} + (n * 1079) % ${3 * DAY}), 'UTC'),
                     'api_key', 'api', concat('u', toString(n % 17)), '', ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4'][1 + n % 3], 'openai',
                     generateUUIDv4(n), cityHash64(n), 100 + n % 5000, 500 + n % 3000, 50 + n % 900, n % 200,
                     if(n % 7 = 0, NULL, (50 + n % 900) / 3), n % 50 = 0
              FROM (SELECT number AS n FROM numbers(${part * (ROWS / 3)}, ${ROWS / 3}))`,
      query_params: { tenant: svc.service.bootstrap!.tenantId, project: projectId, start },
    });
  }
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

/** What the engine reads of a Parquet file: its columns, and its rows as a count and an order-free digest. */
async function readBack(file: string): Promise<{ columns: unknown[]; rows: number; digest: string }> {
  const ch = svc.service.deps.ch.client;
  const describe = await (await ch.query({ query: 'DESCRIBE file({file:String}, Parquet)', query_params: { file }, format: 'JSONEachRow' })).json<{ name: string; type: string }>();
  const [summary] = await (await ch.query({
    query: 'SELECT count() AS rows, toString(sum(cityHash64(*))) AS digest FROM file({file:String}, Parquet)',
    query_params: { file },
    format: 'JSONEachRow',
  })).json<{ rows: string | number; digest: string }>();
  return { columns: describe.map((c) => [c.name, c.type]), rows: Number(summary.rows), digest: summary.digest };
}

/** The export downloaded to DATA_DIR/`name`. */
async function download(name: string): Promise<string> {
  const query = new URLSearchParams({ from: 'generation.completed', start: iso(start), end_exclusive: iso(start + 3 * DAY), format: 'parquet' });
  const res = await fetch(`${svc.api}/projects/${projectId}/export?${query}`, { headers: { authorization: `Bearer ${svc.adminKey}` } });
  expect(res.status).toBe(200);
  const file = path.join(svc.dataDir, name);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

const scope = () => ({ tenantId: svc.service.bootstrap!.tenantId, projectId });
const event = () => findEvent('generation.completed')!;

it('joins the slices into one Parquet file with the rows and columns of one statement over the window', async () => {
  const joined = await download('joined.parquet');

  // One statement over the whole window: the file a Parquet export was before it was read in slices.
  const ch = svc.service.deps.ch;
  const whole = eventExportStatement(ch, scope(), { event: event(), window }, OUTPUT_SETTINGS);
  const stream = await ch.stream(whole.statement, 'Parquet', { lane: 'analytics', scope: scope(), timeoutSeconds: 120, settings: whole.settings });
  const parts: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
  const single = path.join(svc.dataDir, 'single.parquet');
  fs.writeFileSync(single, Buffer.concat(parts));

  const got = await readBack(joined);
  expect(got.rows).toBe(ROWS);
  expect(got).toEqual(await readBack(single));

  // The footer indexes every slice's row groups: a day each here (80,000 rows, under one group's 100,000), adding up to the rows.
  const [meta] = await (await ch.client.query({
    query: 'SELECT num_rows, arrayMap(g -> g.num_rows, row_groups) AS groups FROM file({file:String}, ParquetMetadata)',
    query_params: { file: joined },
    format: 'JSONEachRow',
  })).json<{ num_rows: string | number; groups: (string | number)[] }>();
  const perDay = await (await ch.client.query({
    query: 'SELECT count() AS n FROM file({file:String}, Parquet) GROUP BY toDate(timestamp) ORDER BY toDate(timestamp)',
    query_params: { file: joined },
    format: 'JSONEachRow',
  })).json<{ n: string | number }>();
  expect(Number(meta.num_rows)).toBe(ROWS);
  expect(perDay).toHaveLength(3);
  expect(meta.groups.map(Number)).toEqual(perDay.map((d) => Number(d.n)));
}, 180_000);

it("starts a slice's statement only once the reader took the slice before, then delivers the whole file", async () => {
  const days = [0, 1, 2].map((d) =>
    eventExportStatement(svc.service.deps.ch, scope(), { event: event(), window: { start: new Date(start + d * DAY), endExclusive: new Date(start + (d + 1) * DAY) } }, { ...OUTPUT_SETTINGS, ...FORMATS.parquet.settings }),
  );
  let started = 0;
  // The runner's parts as the join asks for them, counted: asking for a part runs its statement.
  async function* counted(files: AsyncIterable<AsyncIterable<Uint8Array>>): AsyncGenerator<AsyncIterable<Uint8Array>> {
    for await (const file of files) {
      started++;
      yield file;
    }
  }
  const body = await svc.service.deps.ch.streamParts(days.map((d) => ({ statement: d.statement, format: 'Parquet' as const })), {
    lane: 'analytics', scope: scope(), timeoutSeconds: 120, settings: days[0].settings, join: (files) => joinParquet(counted(files)),
  });
  const chunks: Buffer[] = [];
  const reader = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const first = await reader.next();
  chunks.push(first.value as Buffer);
  // The reader pauses: the first day's file waits for it in the stream's buffer, the second day's statement does not run.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect(started).toBe(1);
  for (let next = await reader.next(); !next.done; next = await reader.next()) chunks.push(next.value);
  expect(started).toBe(3);
  const file = path.join(svc.dataDir, 'paused.parquet');
  fs.writeFileSync(file, Buffer.concat(chunks));
  expect((await readBack(file)).rows).toBe(ROWS);
}, 180_000);
