import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { prepareIngest } from '../../../src/ingest/write/ingest-prepare.js';
import { IngestWriter, type PreparedWrite } from '../../../src/ingest/write/ingest-writer.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// The ingest writer's group commit against the embedded engine: when flushes start, and that no
// request is left waiting. Every flush writes one part per table, so how many flushes a load
// makes weighs on the engine's cost per span (bench/README.md "OTLP ingestion").

let ch: ClickHouseStore;
/** Inserts into `spans` so far (one per flush that stored something). */
let spanInserts = 0;

beforeAll(async () => {
  const opened = await openClickHouse({ url: null, user: '', password: '', database: 'writer_flushes', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(opened, path.resolve('clickhouse'));
  ch = {
    ...opened,
    insertBody: async (table, parts, lane, columns, settings) => {
      if (table === opened.table('spans')) spanInserts++;
      await opened.insertBody(table, parts, lane, columns, settings);
    },
  };
});
afterAll(async () => {
  await ch?.close();
});

const origin = { actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: 'k' };

function request(): PreparedWrite {
  const { body } = agentRunRequest({ start: new Date(), agent: 'a', generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search' }] });
  const prepared = prepareIngest({ body: Buffer.from(body), encoding: 'json', tenantId: 't', fixedProject: 'p', origin });
  if (prepared.kind !== 'prepared') throw new Error('test request did not prepare');
  return { rows: prepared.rows, traces: prepared.traces, bytes: body.length };
}

const writer = (flushMs: number) =>
  new IngestWriter({ ch, logger: pino({ level: 'silent' }), maxInflightBytes: 2 ** 30, flushMs, batchRows: 50_000 });

/** Resolves to 'timed out' when `promise` has not settled within `ms`. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), ms))]);

it('answers a write handed in by a continuation of an answered request, at any point of the flush ending', async () => {
  // A write made after the flush loop's last look at the queue but before the loop was marked done
  // found a flush running and armed no timer: it waited for the next write, forever when none came.
  const w = writer(5);
  for (let ticks = 0; ticks < 12; ticks++) {
    const second = w.write(request()).then(async () => {
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      return w.write(request());
    });
    expect(await within(second, 10_000), `a write ${ticks} microtasks after the answer`).toMatchObject({ written: 3 });
  }
  await w.stop();
});

it('gathers the requests of its window into one flush', async () => {
  const w = writer(2000);
  const before = spanInserts;
  // Handed in one after another, 50 ms apart, within the window of the first: one flush.
  const answers: Promise<unknown>[] = [];
  for (let i = 0; i < 4; i++) {
    answers.push(w.write(request()));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all(answers);
  expect(spanInserts - before).toBe(1);
  const rows = await ch.read<{ n: string | number }>(raw(`SELECT count() AS n FROM ${ch.table('spans')}`), { lane: 'system' });
  expect(Number(rows[0].n)).toBeGreaterThanOrEqual(4 * 3);
  await w.stop();
});

it('flushes what is pending at once when stopped', async () => {
  const w = writer(60_000);
  const pending = w.write(request());
  const started = Date.now();
  await w.stop();
  expect(await pending).toMatchObject({ written: 3 });
  expect(Date.now() - started).toBeLessThan(30_000);
});
