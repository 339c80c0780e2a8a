import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { IngestService } from '../../../src/ingest/ingest-service.js';
import { startTestService } from '../../helpers/service.js';

/**
 * Memory admission through the real endpoint: admission charges what a gzip body inflates to (and
 * decodes into) before it has inflated in full. Its own file: chdb binds one data directory per
 * process, and this test needs a service with its own budget. The RSS targets under load are
 * benchmark figures (bench/isolation/isolation-bench.ts); here the bound only has to hold by a wide margin.
 */

const MiB = 1024 * 1024;

describe('memory is bounded', () => {
  /** 20 KB of gzip that inflates to 20 MiB of valid OTLP/JSON (an export with no spans and a long ignored field). */
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"resourceSpans":[],"pad":"'), Buffer.alloc(20 * MiB, 0x20), Buffer.from('"}')]));

  it('charges a gzip bomb for what it inflates to: refused while another request is in flight, served alone, and the budget returns to zero', async () => {
    expect(bomb.length).toBeLessThan(40 * 1024);
    const limited = await startTestService({ OTLP_MAX_BYTES: String(32 * MiB), INGEST_MAX_INFLIGHT_BYTES: String(8 * MiB) });
    try {
      const p = await limited.newProject('bombs');
      const budget = (limited.service.deps.services.ingest as IngestService).writer.budget;
      const send = () =>
        fetch(`${limited.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${limited.adminKey}`, 'x-lookout-project': p.id },
          body: new Uint8Array(bomb),
        });

      // A request holding 1 KB of the budget, its body not yet sent in full.
      const held = http.request(new URL('/v1/traces', limited.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${limited.adminKey}`, 'content-type': 'application/json', 'content-length': '1024', 'x-lookout-project': p.id },
      });
      const heldAnswer = new Promise<number | undefined>((resolve) => held.on('response', (r) => (r.resume(), resolve(r.statusCode))));
      held.write('{"resourceSpans":[');
      const deadline = Date.now() + 20_000;
      while (budget.inflightBytes === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(budget.inflightBytes).toBeGreaterThan(0);

      // Its compressed 20 KB would fit; the 20 MiB it inflates to does not.
      const refused = await send();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ code: 'rate_limited' });

      held.end(`${' '.repeat(1024 - '{"resourceSpans":['.length - 2)}]}`);
      expect(await heldAnswer).toBe(200);
      expect(budget.inflightBytes).toBe(0);
      // Alone in flight, a request may use more than the budget: the bomb is a valid (empty) export.
      expect((await send()).status).toBe(200);

      // 48 at once: each is refused or served, never a 5xx; memory grows by far less than 48 × 20 MiB.
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      const statuses = await Promise.all(Array.from({ length: 48 }, async () => (await send()).status));
      clearInterval(sampler);
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
      expect(budget.inflightBytes).toBe(0);
      expect((peak - before) / MiB).toBeLessThan(300);
    } finally {
      await limited.stop();
    }
  });
});
