import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ComputeOutOfMemoryError, type ComputeCpu } from '../../../src/platform/compute/compute-pool.js';
import { createComputePool } from '../../../src/app/compute-tasks.js';
import { prepareIngestTask } from '../../../src/ingest/write/ingest-prepare.js';
import { ownedBytes } from '../../../src/platform/compute/owned-bytes.js';
import { chainRequests } from '../../helpers/span-chain.js';
import { syntheticBatch } from '../../helpers/synthetic-batch.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * A compute worker with a heap cap that a task outgrows never takes the process down: a protobuf
 * body whose decoding outgrows the cap ends only its worker (the pool starts a new one); an
 * OTLP/JSON body whose parse the heap could not hold — JSON.parse is one native step that does not
 * stop when the worker is told to, and overshooting the cap inside it aborts the whole process — is
 * refused before it starts, and the worker stays. Both answer ComputeOutOfMemoryError (503
 * overloaded over HTTP), and later tasks run.
 */

const HEAP_MB = 48;
const origin = { actor: 'sdk', surface: 'otlp', user_id: 'u', api_key_id: 'k' };

function task(body: Buffer, encoding: 'json' | 'protobuf') {
  const bytes = ownedBytes(body);
  return { input: { body: bytes, encoding, tenantId: 't1', fixedProject: 'p1', origin }, transfer: [bytes.buffer as ArrayBuffer] };
}

const chainJson = (length: number) => {
  const { bodies } = chainRequests({ length, usageEvery: 100, startMs: Date.UTC(2026, 10, 20) });
  return Buffer.from(JSON.stringify(bodies[0]));
};

/** A pool with one capped worker that records which worker threads ran its tasks. */
function cappedPool() {
  const statsFile = path.join(tempDataDir('compute-pool-memory-'), 'cpu.json');
  const pool = createComputePool({ threads: 1, heapMb: HEAP_MB, statsFile });
  return {
    run: (t: ReturnType<typeof task>) => pool.run(prepareIngestTask, t.input, t.transfer),
    /** Closes the pool; the OS ids of the worker threads that answered a task. */
    async workers(): Promise<number[]> {
      await pool.close();
      return (JSON.parse(fs.readFileSync(statsFile, 'utf8')) as ComputeCpu).threadIds;
    },
  };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

function expectOverloaded(error: unknown) {
  expect(error).toBeInstanceOf(ComputeOutOfMemoryError);
  expect(error).toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '5' } });
}

describe('compute pool with a worker heap cap', () => {
  it('refuses an OTLP/JSON body whose parse the heap could not hold before parsing it, and keeps the worker', async () => {
    const pool = cappedPool();
    expect(await pool.run(task(chainJson(2_000), 'json'))).toMatchObject({ kind: 'prepared', acceptedSpans: 2_000 });

    // 50 MB of GenAI spans: parsing takes several times that, past a 48 MB worker in any case.
    const huge = chainJson(200_000);
    expect(huge.byteLength).toBeGreaterThan(40e6);
    expectOverloaded(await failure(pool.run(task(huge, 'json'))));

    // 5 MB of empty objects: small beside the cap by its size, but every `{}` is a heap object of
    // ~32 bytes per delimiter, so its parse needs far more than the worker has; refused too.
    const span = { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'flood', startTimeUnixNano: '1', endTimeUnixNano: '2' };
    const flood = `{"resourceSpans":[{"scopeSpans":[{"spans":[${JSON.stringify(span).slice(0, -1)},"events":[${'{},'.repeat(1_700_000)}{}]}]}]}]}`;
    expect(flood.length).toBeLessThan(6e6);
    expectOverloaded(await failure(pool.run(task(Buffer.from(flood), 'json'))));

    // A transferred body is gone from this thread: each task gets its own.
    expect(await pool.run(task(chainJson(2_000), 'json'))).toMatchObject({ kind: 'prepared', acceptedSpans: 2_000 });
    expect(await pool.workers()).toHaveLength(1);
  }, 120_000);

  it('answers a protobuf body whose decoding outgrows the cap by ending only its worker, then runs the next task on a new one', async () => {
    const pool = cappedPool();
    expect(await pool.run(task(syntheticBatch(1_000).protobuf, 'protobuf'))).toMatchObject({ kind: 'prepared', acceptedSpans: 1_000 });
    const huge = syntheticBatch(200_000);
    expectOverloaded(await failure(pool.run(task(huge.protobuf, 'protobuf'))));
    expect(await pool.run(task(syntheticBatch(1_000).protobuf, 'protobuf'))).toMatchObject({ kind: 'prepared', acceptedSpans: 1_000 });
    expect(await pool.workers()).toHaveLength(2);
  }, 120_000);
});
