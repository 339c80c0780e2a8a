/**
 * tool_aggregates counts distinct traces per tool exactly: tool.called stores trace_id as a UUID
 * (clickhouse/009) and the view counts the 16-byte values. Ids that share one half
 * of their 128 bits, the nil UUID and a repeated id each count as what they are: one trace per
 * distinct id, as uniqExact over the ids' text counted before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAggregatesView } from '../../../src/analytics/views/tool-aggregates-view.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { spanIdFor } from '../../helpers/event-ids.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';

const UUID = '3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f';
const IDS = [
  UUID,
  UUID, // the same trace again
  '3f2a9c1e-7b4d-4e8a-0000-000000000000', // the same high half
  '00000000-0000-4000-9c2f-1a2b3c4d5e6f', // the same low half
  '00000000-0000-0000-0000-000000000000',
  'c9a1e0f2-0000-4000-8000-000000000001',
];
const START = new Date('2026-11-01T00:00:00Z');

describe('tool_aggregates distinct traces over UUID trace ids', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const rows = IDS.flatMap((traceId, i) => ['search', 'fetch'].slice(0, 1 + (i % 2)).map((tool, j) => ({
      tenant_id: 'tenant-d', project_id: 'project-d', timestamp: '2026-11-01 01:00:00.000', actor: 'sdk', surface: 'otlp',
      tool, agent_name: 'a', trace_id: traceId, span_id: storedSpanId(spanIdFor(`s${i}-${j}`)), duration_ms: 10 + i, output_tokens: 1, error: 0,
    })));
    const ch = svc.service.deps.ch;
    await ch.insert(ch.table('event_tool_called'), rows, 'ingest');
  });
  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDir(svc.dataDir);
  });

  it('counts each distinct id once per tool', async () => {
    const body = await toolAggregatesView(svc.service.deps, 'tenant-d', 'project-d', {
      window: { start: START, endExclusive: new Date(START.getTime() + 86_400_000) },
      granularity: 'day',
    });
    const expected = (tool: string) => new Set(IDS.filter((_, i) => tool === 'search' || i % 2 === 1)).size;
    expect(body.rows.map((r) => [r.tool, r.traces]).sort()).toEqual([['fetch', expected('fetch')], ['search', expected('search')]].sort());
    expect(expected('search')).toBe(IDS.length - 1);
  });
});
