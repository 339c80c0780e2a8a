import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { prepareIngest } from '../../../src/ingest/ingest-prepare.js';
import { IngestWriter, type PreparedWrite } from '../../../src/ingest/ingest-writer.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/stores/clickhouse.js';
import { raw } from '../../../src/stores/clickhouse-sql/fragment.js';
import { migrateClickHouse } from '../../../src/stores/migrations.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// The ingest writer's group commit against the embedded engine: when flushes start, and that no
// request is left waiting. Every flush writes one part per table, so how many flushes a load
// makes is most of the engine's cost per span (bench/README.md "OTLP ingestion").

let ch: ClickHouseStore;
/** Inserts into `spans` so far (one per flush that stored something). */
let spanInserts = 0;

beforeAll(async () => {
  const opened = await openClickHouse({ url: null, user: '', password: '', database: 'writer_flushes', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(opened, path.resolve('clickhouse'));
  ch = {
    ...opened,
    insertBody: async (table, parts, lane) => {
      if (table === opened.table('spans')) spanInserts++;
      await opened.insertBody(table, parts, lane);
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
      for (let i = 0; i < ticks; i++) await null;
      return w.write(request());
    });
    expect(await within(second, 10_000), `a write ${ticks} microtasks after the answer`).toMatchObject({ written: 3 });
  }
  await w.stop();
});

/** A request as the OTLP route makes it: admitted, its body charged to the budget, released once answered. */
function admitted(w: IngestWriter) {
  const reservation = w.admit();
  const write = request();
  reservation.reserve(write.bytes);
  return { hand: () => w.write(write).finally(() => reservation.release()), release: () => reservation.release() };
}

it('waits for the requests still on their way, so they share one flush', async () => {
  const w = writer(600_000);
  const before = spanInserts;
  const requests = Array.from({ length: 4 }, () => admitted(w));
  // Handed in one after another, 50 ms apart: nothing flushes before the last one is in.
  const answers: Promise<unknown>[] = [];
  for (const r of requests) {
    answers.push(r.hand());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all(answers);
  expect(spanInserts - before).toBe(1);
  const rows = await ch.read<{ n: string | number }>(raw(`SELECT count() AS n FROM ${ch.table('spans')}`), { lane: 'system' });
  expect(Number(rows[0].n)).toBeGreaterThanOrEqual(4 * 3);
  await w.stop();
});

it('after a flush of several requests, gathers flushMs of arrivals before the next one', async () => {
  const w = writer(500);
  const before = spanInserts;
  await Promise.all([admitted(w), admitted(w)].map((r) => r.hand()));
  expect(spanInserts - before).toBe(1);
  // Concurrent load: the next request waits for company, though nothing else is on its way yet.
  const started = Date.now();
  const next = admitted(w).hand();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const company = admitted(w).hand();
  await Promise.all([next, company]);
  expect(Date.now() - started).toBeGreaterThanOrEqual(490);
  expect(spanInserts - before).toBe(2);
  await w.stop();
});

it('flushes a lone request at once, whatever flushMs', async () => {
  const w = writer(600_000);
  const before = spanInserts;
  expect(await within(admitted(w).hand(), 20_000)).toMatchObject({ written: 3 });
  expect(spanInserts - before).toBe(1);
  await w.stop();
});

it('starts the flush it held when the request it waited for ends unwritten', async () => {
  const w = writer(600_000);
  const failing = admitted(w);
  const waiting = admitted(w).hand();
  expect(await within(waiting, 300)).toBe('timed out');
  failing.release(); // refused or failed before handing in its rows
  expect(await within(waiting, 20_000)).toMatchObject({ written: 3 });
  await w.stop();
});

it('waits for a request on its way at most flushMs', async () => {
  const w = writer(300);
  const stuck = admitted(w);
  const started = Date.now();
  expect(await within(admitted(w).hand(), 20_000)).toMatchObject({ written: 3 });
  expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  stuck.release();
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
