import { describe, expect, it } from 'vitest';
import { packToolRows, unpackToolRows } from '../../../src/ingest/write/packed-tool-rows.js';
import type { ToolCalledRow } from '../../../src/spans/event-rows.js';

/** tool.called rows cross threads as tuples: unpacking must give back every field of every row. */
describe('packed tool rows', () => {
  it('round-trips every field, in order, through structured clone', () => {
    const rows: ToolCalledRow[] = [
      {
        tenant_id: 't1', project_id: 'p1', timestamp: '2026-11-24 09:00:00.123', actor: 'sdk', surface: 'otlp', user_id: 'u1',
        api_key_id: 'k1', trace_id: 'tr1', span_id: 's1', tool: 'lookup_order', agent_name: 'support', duration_ms: 12.5, output_tokens: 40, error: 1,
      },
      {
        tenant_id: 't2', project_id: 'p2', timestamp: '2026-11-24 09:00:01.000', actor: 'system', surface: 'system', user_id: '',
        api_key_id: '', trace_id: 'tr2', span_id: 's2', tool: 'reply', agent_name: '', duration_ms: 0, output_tokens: 0, error: 0,
      },
    ];
    const back = unpackToolRows(structuredClone(packToolRows(rows)));
    expect(back).toEqual(rows);
    // Same keys in the same order as the rows event-rows.ts builds (what the encoder and comparisons see).
    expect(back.map((r) => Object.keys(r))).toEqual(rows.map((r) => Object.keys(r)));
    expect(packToolRows(new Map(rows.map((r) => [r.span_id, r])).values())).toEqual(packToolRows(rows));
  });
});
