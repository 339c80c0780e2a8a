/**
 * Polls GET /healthz one request at a time and records each answer's latency: while the service's
 * event loop is blocked, the probe's request waits, so the largest latency is the longest stall.
 */
export interface LoopProbe {
  stop(): Promise<{ count: number; maxMs: number; p95Ms: number }>;
}

export function probeHealthz(url: string, intervalMs = 20): LoopProbe {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const start = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        count: sorted.length,
        maxMs: sorted[sorted.length - 1] ?? 0,
        p95Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0,
      };
    },
  };
}
