import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticBatch } from '../../helpers/synthetic-batch.js';
import { probeHealthz } from '../../helpers/loop-probe.js';
import { BOOTSTRAP_KEY, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * While concurrent senders post 1000-span protobuf batches, /healthz keeps answering, because
 * decoding, row building and serialization run on the compute pool. What is asserted holds on a
 * loaded 2-core runner: every batch is accepted, the decode task's CPU is accounted to the pool's
 * worker (the pool's statistics file, a harness option of the spawned service), so decoding moved back onto the event loop fails here whatever the
 * machine's load, and the probe keeps getting answers throughout, with no stall near the length of
 * the run. The latency target (p95 < 100 ms, max < 500 ms under 32 senders) is a figure of
 * bench/isolation on a quiet machine.
 */

const dataDir = tempDataDir();
const statsFile = path.join(dataDir, 'compute-stats.json');
/** Far below a run of 48 batches decoded back to back on one thread, far above a loaded runner's hiccups. */
const MAX_STALL_MS = 5000;
let svc: SpawnedService;
let project: string;

beforeAll(async () => {
  svc = await spawnService(dataDir, { LOG_LEVEL: 'info', COMPUTE_THREADS: '1' }, { statsFiles: { compute: statsFile } });
  const res = await fetch(`${svc.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'loop probe' }),
  });
  project = ((await res.json()) as { id: string }).id;
});

afterAll(async () => {
  await svc?.stop();
  removeDir(dataDir);
});

describe('event loop under ingest load', () => {
  it('decodes on the pool and keeps answering /healthz while 8 senders post 1000-span batches', async () => {
    const batches = Array.from({ length: 48 }, () => syntheticBatch(1000).protobuf);
    const probe = probeHealthz(svc.url, 10);
    let next = 0;
    let accepted = 0;
    const sender = async () => {
      for (let i = next++; i < batches.length; i = next++) {
        for (;;) {
          const res = await fetch(`${svc.url}/v1/traces`, {
            method: 'POST',
            headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'x-lookout-project': project, 'content-type': 'application/x-protobuf' },
            body: new Uint8Array(batches[i]),
          });
          await res.arrayBuffer();
          if (res.status === 200) break;
          expect([429, 503]).toContain(res.status);
          await new Promise((r) => setTimeout(r, 100));
        }
        accepted++;
      }
    };
    let stats;
    try {
      await Promise.all(Array.from({ length: 8 }, sender));
    } finally {
      stats = await probe.stop();
    }
    expect(accepted).toBe(48);
    expect(stats.count).toBeGreaterThan(20);
    expect(stats.maxMs).toBeLessThan(MAX_STALL_MS);

    // The pool writes its CPU per task when the service stops.
    expect(await svc.stop()).toBe(0);
    const cpu = JSON.parse(fs.readFileSync(statsFile, 'utf8')) as { msByTask: Record<string, number>; threadIds: number[] };
    expect(cpu.threadIds).toHaveLength(1);
    expect(cpu.msByTask['prepare-ingest']).toBeGreaterThan(0);
  }, 300_000);
});
