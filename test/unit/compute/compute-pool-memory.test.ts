import { afterAll, describe, expect, it } from 'vitest';
import { ComputeOutOfMemoryError } from '../../../src/platform/compute/compute-pool.js';
import { createComputePool } from '../../../src/app/compute-tasks.js';
import { prepareIngestTask } from '../../../src/ingest/write/ingest-prepare.js';
import { ownedBytes } from '../../../src/platform/compute/owned-bytes.js';
import { chainRequests } from '../../helpers/span-chain.js';

/**
 * A compute worker with a heap cap that a task outgrows dies alone: the task answers
 * ComputeOutOfMemoryError (503 overloaded over HTTP), the pool starts a new worker, and later tasks
 * run — the service does not crash.
 */

const capped = createComputePool({ threads: 1, heapMb: 48 });

afterAll(async () => {
  await capped.close();
});

const origin = { actor: 'sdk', surface: 'otlp', user_id: 'u', api_key_id: 'k' };
const prepare = (length: number) => {
  const { bodies } = chainRequests({ length, usageEvery: 100, startMs: Date.UTC(2026, 10, 20) });
  const bytes = ownedBytes(Buffer.from(JSON.stringify(bodies[0])));
  return { input: { body: bytes, encoding: 'json' as const, tenantId: 't1', fixedProject: 'p1', origin }, transfer: [bytes.buffer as ArrayBuffer] };
};

describe('compute pool with a worker heap cap', () => {
  it('answers a task that outgrows the cap with ComputeOutOfMemoryError, then runs the next task on a new worker', async () => {
    const small = prepare(20);
    expect(await capped.run(prepareIngestTask, small.input, small.transfer)).toMatchObject({ kind: 'prepared', acceptedSpans: 20 });
    const huge = prepare(200_000);
    const failed = await capped.run(prepareIngestTask, huge.input, huge.transfer).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(ComputeOutOfMemoryError);
    expect(failed).toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '5' } });
    const again = prepare(20);
    expect(await capped.run(prepareIngestTask, again.input, again.transfer)).toMatchObject({ kind: 'prepared', acceptedSpans: 20 });
  }, 120_000);
});
