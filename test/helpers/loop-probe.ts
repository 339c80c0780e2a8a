import { Worker } from 'node:worker_threads';

/**
 * Polls GET /healthz one request at a time and records each answer's latency: while the service's
 * event loop is blocked, the probe's request waits, so the largest latency is the longest stall.
 * The probe runs on its own thread, so the test's own work (building and parsing large bodies) on
 * the main thread never delays the probe and shows up as a stall of the service.
 */
export interface LoopProbe {
  stop(): Promise<{ count: number; maxMs: number; p95Ms: number }>;
}

const PROBE_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const latencies = [];
let running = true;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const start = performance.now();
    try {
      const res = await fetch(workerData.url + '/healthz');
      await res.arrayBuffer();
    } catch {
      // counted by its latency like any other answer
    }
    latencies.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, workerData.intervalMs));
  }
  parentPort.postMessage(latencies);
})();
`;

export function probeHealthz(url: string, intervalMs = 20): LoopProbe {
  const worker = new Worker(PROBE_SOURCE, { eval: true, workerData: { url, intervalMs } });
  const done = new Promise<number[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const latencies = await done;
      await worker.terminate();
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        count: sorted.length,
        maxMs: sorted[sorted.length - 1] ?? 0,
        p95Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0,
      };
    },
  };
}
