import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { approximateBytes } from '../../../src/ingest/settle/approximate-bytes.js';
import { HookRunner } from '../../../src/ingest/settle/hook-runner.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';

function trace(id: string, attributeChars: number): ProcessedTrace {
  return {
    tenantId: 't', projectId: 'p', traceId: id, otelTraceId: id, timestamp: '2026-01-01T00:00:00Z', agentName: 'a',
    hasError: false, failures: [], toolCalls: [], agentInput: null, agentOutput: null,
    spanAttributes: { s1: { 'big.value': 'x'.repeat(attributeChars) } },
  };
}

/** A listener that holds each trace until released, so the queue fills. */
function gatedHooks() {
  const started: string[] = [];
  const gates: (() => void)[] = [];
  const hook = async (traces: ProcessedTrace[]) => {
    for (const t of traces) {
      started.push(t.traceId);
      await new Promise<void>((resolve) => gates.push(resolve));
    }
  };
  return { hooks: { onTracesProcessed: [hook] }, started, releaseAll: () => gates.splice(0).forEach((g) => g()) };
}

describe('approximateBytes', () => {
  it('grows with string length and nesting', () => {
    expect(approximateBytes('x'.repeat(1000))).toBeGreaterThanOrEqual(2000);
    expect(approximateBytes({ a: ['x'.repeat(1000), 'y'.repeat(1000)] })).toBeGreaterThan(4000);
    expect(approximateBytes(trace('a', 1_000_000))).toBeGreaterThan(2_000_000);
  });
});

describe('HookRunner queue bound by bytes', () => {
  it('makes enqueue wait while the queued payloads exceed the byte budget, and admits them as room frees', async () => {
    const { hooks, started, releaseAll } = gatedHooks();
    // One listener slot, groups of one trace; room for about two 1 MB-character payloads in the queue.
    const runner = new HookRunner(hooks, pino({ level: 'silent' }), { concurrency: 1, groupSize: 1, maxQueuedBytes: 5 * 1024 * 1024 });
    const admitted: string[] = [];
    const enqueue = (id: string) => runner.enqueue([trace(id, 1_000_000)]).then((r) => (admitted.push(id), r));
    const all = ['t1', 't2', 't3', 't4', 't5'].map(enqueue);
    await new Promise((r) => setTimeout(r, 20));
    // t1 runs; t2 and t3 wait in the queue (2 x ~2 MB); t4 and t5 wait for room.
    expect(started).toEqual(['t1']);
    expect(admitted.sort()).toEqual(['t1', 't2', 't3']);
    expect(runner.queuedPayloadBytes).toBeLessThanOrEqual(5 * 1024 * 1024);
    // Finish everything one at a time; every trace runs once.
    while (started.length < 5) {
      releaseAll();
      await new Promise((r) => setTimeout(r, 5));
    }
    releaseAll();
    const ran = await Promise.all(all);
    await Promise.all(ran.map((r) => r.ran));
    expect(started.sort()).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(runner.queuedPayloadBytes).toBe(0);
  });

  it('admits a payload bigger than the whole budget into an empty queue', async () => {
    const { hooks, started, releaseAll } = gatedHooks();
    const runner = new HookRunner(hooks, pino({ level: 'silent' }), { concurrency: 1, groupSize: 1, maxQueuedBytes: 1024 });
    const first = await runner.enqueue([trace('busy', 10)]);
    const huge = await runner.enqueue([trace('huge', 100_000)]);
    expect(runner.queuedPayloadBytes).toBeGreaterThan(1024);
    while (started.length < 2) {
      releaseAll();
      await new Promise((r) => setTimeout(r, 5));
    }
    releaseAll();
    await Promise.all([first.ran, huge.ran]);
    expect(started).toEqual(['busy', 'huge']);
  });
});
