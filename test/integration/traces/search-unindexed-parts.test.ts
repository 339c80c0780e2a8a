/**
 * On the embedded engine a settle round writes trace_content without its text index (built when the
 * engine merges the part): search must answer the same before and after. The parts the round wrote
 * are checked to lack the index (merges are held), then merged with it, and the same search asked
 * again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { syntheticBatch } from '../../helpers/synthetic-batch.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from '../ingest/otlp-client.js';

let svc: TestService;
let dataDir: string;
let projectId: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  svc = await startTestService({ TRACE_SETTLE_MS: '300' }, dataDir);
  projectId = (await svc.newProject('unindexed')).id;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

/** Active trace_content parts: how many, and how many carry text index data. */
async function contentParts(): Promise<{ parts: number; indexed: number }> {
  const { ch } = svc.service.deps;
  const result = await ch.client.query({
    query: `SELECT count() AS parts, countIf(secondary_indices_compressed_bytes > 0) AS indexed FROM system.parts
            WHERE active AND database = {db:String} AND table = 'trace_content'`,
    query_params: { db: ch.database },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ parts: string; indexed: string }>();
  return { parts: Number(row.parts), indexed: Number(row.indexed) };
}

async function found(query: string): Promise<string[]> {
  const res = await svc.call('GET', `/projects/${projectId}/traces?q=${encodeURIComponent(query)}&limit=100`);
  expect(res.status).toBe(200);
  return (res.body.traces as { otel_trace_id: string }[]).map((t) => t.otel_trace_id).sort();
}

describe('search over trace_content parts without the text index', () => {
  it('finds the same traces before the merge builds the index and after', async () => {
    const { ch, sql } = svc.service.deps;
    expect(ch.embedded).toBe(true);
    await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('trace_content')}` });
    // Two requests: two settle rounds' parts. Each trace asks "Where is my order #N?".
    const batches = [syntheticBatch(50), syntheticBatch(50)];
    for (const batch of batches) {
      const answer = await postOtlp(svc.url, svc.adminKey, batch.protobuf, { headers: { 'x-lookout-project': projectId } });
      expect(answer.status).toBe(200);
      await waitFor(async () => ((await queueDepth(sql)) === 0 ? true : undefined), 60_000, 'the settle queue to drain');
    }
    const all = batches.flatMap((b) => b.traceIds).sort();
    const before = await contentParts();
    expect(before.parts).toBeGreaterThan(0);
    expect(before.indexed).toBe(0);
    expect(await found('where is my order')).toEqual(all);
    expect(await found('nothing like this')).toEqual([]);

    await ch.client.command({ query: `SYSTEM START MERGES ${ch.table('trace_content')}` });
    await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table('trace_content')} FINAL` });
    const after = await contentParts();
    expect(after.indexed).toBe(after.parts);
    expect(await found('where is my order')).toEqual(all);
    expect(await found('nothing like this')).toEqual([]);
  }, 180_000);
});
