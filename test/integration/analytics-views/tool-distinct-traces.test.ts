/**
 * tool_aggregates counts distinct traces per tool by reading canonical UUID ids as UUIDs and every
 * other id as text (issue 17). Ingestion only stores canonical ids, so this writes the rows
 * directly: the count must equal the distinct id strings for any mix — the same UUID in upper case
 * or without dashes is a different string, so a different trace, as uniqExact(trace_id) says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAggregatesView } from '../../../src/analytics/views/tool-aggregates-view.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';

const UUID = '3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f';
const IDS = [
  UUID,
  UUID, // the same trace again
  UUID.toUpperCase(),
  UUID.replaceAll('-', ''),
  `{${UUID}}`,
  '00000000-0000-0000-0000-000000000000',
  'not-a-uuid',
  '',
  'c9a1e0f2-0000-4000-8000-000000000001',
];
const START = new Date('2026-11-01T00:00:00Z');

describe('tool_aggregates distinct traces for any trace id text', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const rows = IDS.flatMap((traceId, i) => ['search', 'fetch'].slice(0, 1 + (i % 2)).map((tool, j) => ({
      tenant_id: 'tenant-d', project_id: 'project-d', timestamp: '2026-11-01 01:00:00.000', actor: 'sdk', surface: 'otlp',
      tool, agent_name: 'a', trace_id: traceId, span_id: `s${i}-${j}`, duration_ms: 10 + i, output_tokens: 1, error: 0,
    })));
    const ch = svc.service.deps.ch;
    await ch.insert(ch.table('event_tool_called'), rows, 'ingest');
  });
  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDir(svc.dataDir);
  });

  it('counts each distinct id string once per tool', async () => {
    const body = await toolAggregatesView(svc.service.deps, 'tenant-d', 'project-d', {
      window: { start: START, endExclusive: new Date(START.getTime() + 86_400_000) },
      granularity: 'day',
    });
    const expected = (tool: string) => new Set(IDS.filter((_, i) => tool === 'search' || i % 2 === 1)).size;
    expect(body.rows.map((r) => [r.tool, r.traces]).sort()).toEqual([['fetch', expected('fetch')], ['search', expected('search')]].sort());
    expect(expected('search')).toBe(IDS.length - 1);
  });
});
