import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createComputePool } from '../../../src/app/compute-tasks.js';
import { prepareIngestTask } from '../../../src/ingest/write/ingest-prepare.js';
import { otlpBatchTask } from '../../../src/lifecycle/otlp-export-lines.js';
import { workersByLine } from '../../../src/platform/compute/compute-pool.js';
import { ownedBytes } from '../../../src/platform/compute/owned-bytes.js';
import { chainRequests } from '../../helpers/span-chain.js';

/**
 * The compute pool runs the same pure tasks on a worker thread (loaded through the tsx shim when
 * running from source, as here) as inline, and moves request bodies without a copy.
 */

const threaded = createComputePool({ threads: 1 });
const inline = createComputePool({ threads: 0 });

afterAll(async () => {
  await threaded.close();
});

const origin = { actor: 'sdk', surface: 'otlp', user_id: 'u', api_key_id: 'k' };
const body = (text: string) => ownedBytes(Buffer.from(text));

describe('compute pool', () => {
  it('prepares an OTLP request on a worker exactly as inline', async () => {
    const { bodies } = chainRequests({ length: 50, usageEvery: 10, startMs: Date.UTC(2026, 10, 20) });
    const text = JSON.stringify(bodies[0]);
    const input = (bytes: Uint8Array) => ({ body: bytes, encoding: 'json' as const, tenantId: 't1', fixedProject: 'p1', origin });
    const moved = body(text);
    const fromWorker = await threaded.run(prepareIngestTask, input(moved), [moved.buffer as ArrayBuffer]);
    // Transferred: the caller's copy is gone.
    expect(moved.byteLength).toBe(0);
    const fromInline = await inline.run(prepareIngestTask, input(body(text)));
    expect(fromWorker).toEqual(fromInline);
    expect(fromWorker).toMatchObject({ kind: 'prepared', acceptedSpans: 50, rejectedSpans: 0, projects: ['p1'] });
  });

  it('reports an undecodable body as data, so the service can answer 400', async () => {
    const result = await threaded.run(prepareIngestTask, { body: body('{not json'), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    expect(result).toEqual({ kind: 'undecodable', message: expect.stringContaining('Invalid JSON') });
  });

  it('copies a slice of a shared buffer before it is moved', () => {
    const pooled = Buffer.from('small'); // from Node's shared allocation pool
    const owned = ownedBytes(pooled);
    expect(owned.buffer).not.toBe(pooled.buffer);
    expect(Buffer.from(owned).toString()).toBe('small');
  });

  it('accounts thread CPU per task only when it writes a stats file', async () => {
    const statsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-compute-stats-')), 'stats.json');
    const measured = createComputePool({ threads: 1, statsFile });
    const { bodies } = chainRequests({ length: 200, usageEvery: 10, startMs: Date.UTC(2026, 10, 20) });
    await measured.run(prepareIngestTask, { body: body(JSON.stringify(bodies[0])), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    await measured.close();
    const stats = JSON.parse(fs.readFileSync(statsFile, 'utf8')) as { msByTask: Record<string, number>; threadIds: number[] };
    expect(stats.msByTask['prepare-ingest']).toBeGreaterThan(0);
    expect(stats.threadIds).toHaveLength(1);
    expect(stats.threadIds[0]).not.toBe(process.pid);
  });

  it('tells each task\'s wait for the worker from its whole time: on one thread, tasks sent together wait behind each other', async () => {
    const pool = createComputePool({ threads: 1 });
    const heard: { name: string; seconds: number; waitSeconds: number }[] = [];
    pool.onTask = (name, seconds, waitSeconds) => heard.push({ name, seconds, waitSeconds });
    const { bodies } = chainRequests({ length: 2000, usageEvery: 10, startMs: Date.UTC(2026, 10, 20) });
    const text = JSON.stringify(bodies[0]);
    const prepare = () => pool.run(prepareIngestTask, { body: body(text), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    try {
      // One first, so the worker has loaded what the task needs; then four at once.
      await prepare();
      await Promise.all(Array.from({ length: 4 }, prepare));
    } finally {
      await pool.close();
    }
    expect(heard.map((h) => h.name)).toEqual(Array(5).fill('prepare-ingest'));
    // Each ran for a while (2,000 spans to decode), within its whole time.
    for (const h of heard) {
      expect(h.waitSeconds).toBeGreaterThanOrEqual(0);
      expect(h.seconds - h.waitSeconds).toBeGreaterThan(0.001);
    }
    // The four answer in the order sent; the last waited for the three before it to run.
    const [last, ...earlier] = heard.slice(1).reverse();
    const ranBefore = earlier.reduce((sum, h) => sum + (h.seconds - h.waitSeconds), 0);
    expect(last.waitSeconds).toBeGreaterThanOrEqual(ranBefore * 0.9);
  });

  it('reports no wait for a task run inline', async () => {
    const heard: number[] = [];
    inline.onTask = (_name, _seconds, waitSeconds) => heard.push(waitSeconds);
    try {
      await inline.run(prepareIngestTask, { body: body('{"resourceSpans":[]}'), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    } finally {
      inline.onTask = null;
    }
    expect(heard).toEqual([0]);
  });

  describe('on one thread, with tasks waiting', () => {
    const { bodies } = chainRequests({ length: 2000, usageEvery: 10, startMs: Date.UTC(2026, 10, 20) });
    const text = JSON.stringify(bodies[0]);
    const intake = (pool: ReturnType<typeof createComputePool>) => pool.run(prepareIngestTask, { body: body(text), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    const notIntake = (pool: ReturnType<typeof createComputePool>) => pool.run(otlpBatchTask, { rows: new Uint8Array(), startNs: '0', endNs: '1' });

    /** Runs the labelled tasks, sent in this order, and gives the order they answered in. */
    async function answerOrder(pool: ReturnType<typeof createComputePool>, tasks: [string, () => Promise<unknown>][]): Promise<string[]> {
      const answered: string[] = [];
      await Promise.all(tasks.map(([label, run]) => run().then(() => answered.push(label))));
      return answered;
    }

    it('runs tasks of one line in the order sent', async () => {
      const pool = createComputePool({ threads: 1 });
      try {
        await intake(pool); // loaded
        const labels = ['a', 'b', 'c', 'd', 'e'];
        expect(await answerOrder(pool, labels.map((label) => [label, () => intake(pool)]))).toEqual(labels);
      } finally {
        await pool.close();
      }
    });

    it('runs a task of the first line before intake tasks sent ahead of it, and tells how long intake has waited', async () => {
      const pool = createComputePool({ threads: 1 });
      try {
        await intake(pool);
        await notIntake(pool);
        expect(pool.intakeWaitMs).toBe(0);
        let waitSeen = 0;
        const order = answerOrder(pool, [
          ['intake 1', () => intake(pool)],
          ['intake 2', () => intake(pool)],
          ['intake 3', () => intake(pool)],
          ['first', () => notIntake(pool).then(() => (waitSeen = pool.intakeWaitMs))],
        ]);
        // The first intake runs at once; the rest wait, the first-line task ahead of them.
        expect(await order).toEqual(['intake 1', 'first', 'intake 2', 'intake 3']);
        // When the first-line task answered, intake 2 had waited at least for intake 1 to run.
        expect(waitSeen).toBeGreaterThan(1);
        expect(pool.intakeWaitMs).toBe(0);
      } finally {
        await pool.close();
      }
    });
  });

  describe('on two threads', () => {
    const { bodies } = chainRequests({ length: 2000, usageEvery: 10, startMs: Date.UTC(2026, 10, 20) });
    const text = JSON.stringify(bodies[0]);
    const intake = (pool: ReturnType<typeof createComputePool>) => pool.run(prepareIngestTask, { body: body(text), encoding: 'json', tenantId: 't1', fixedProject: 'p1', origin });
    const notIntake = (pool: ReturnType<typeof createComputePool>) => pool.run(otlpBatchTask, { rows: new Uint8Array(), startNs: '0', endNs: '1' });

    it('gives each line a worker of its own: a first-line task never waits behind queued decoding, and each line keeps to its thread', async () => {
      const statsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-compute-stats-')), 'stats.json');
      const pool = createComputePool({ threads: 2, statsFile });
      const heard: { name: string; waitSeconds: number }[] = [];
      try {
        await Promise.all([intake(pool), notIntake(pool)]); // both workers loaded
        pool.onTask = (name, _seconds, waitSeconds) => heard.push({ name, waitSeconds });
        const answered: string[] = [];
        const decoding = Array.from({ length: 6 }, (_v, i) => intake(pool).then(() => answered.push(`intake ${i + 1}`)));
        // Sent after six decodings: with workers shared by both lines it would wait for one running.
        await notIntake(pool).then(() => answered.push('first'));
        expect(pool.intakeWaitMs).toBeGreaterThan(0);
        await Promise.all(decoding);
        expect(answered[0]).toBe('first');
        expect(answered.slice(1)).toEqual(['intake 1', 'intake 2', 'intake 3', 'intake 4', 'intake 5', 'intake 6']);
        expect(pool.load.threads).toBe(2);
      } finally {
        await pool.close();
      }
      // The first-line task did not wait for a decoding to run; the last decoding waited for five.
      const first = heard.find((h) => h.name === 'otlp-export-batch')!;
      const decodings = heard.filter((h) => h.name === 'prepare-ingest');
      expect(first.waitSeconds).toBeLessThan(Math.max(...decodings.map((h) => h.waitSeconds)));
      const stats = JSON.parse(fs.readFileSync(statsFile, 'utf8')) as { threadIds: number[] };
      expect(new Set(stats.threadIds).size).toBe(2);
    });

    it('splits the threads between the lines, decoding the larger half', () => {
      expect(workersByLine(2)).toEqual({ intake: 1, first: 1 });
      expect(workersByLine(3)).toEqual({ intake: 2, first: 1 });
      expect(workersByLine(7)).toEqual({ intake: 4, first: 3 });
    });
  });
});
