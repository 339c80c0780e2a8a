import { describe, expect, it } from 'vitest';
import { traceKeyParams } from '../../../src/spans/trace-key-params.js';

/** A batch of keys as statement parameters (src/spans/trace-key-params.ts): pairs once, key order, spellings folded. */
describe('traceKeyParams', () => {
  const t1 = '10000000-0000-4000-8000-000000000000';
  const t2 = '20000000-0000-4000-8000-000000000000';
  const pa = 'a0000000-0000-4000-8000-000000000000';
  const pb = 'b0000000-0000-4000-8000-000000000000';
  const tr = (n: number) => `${n}0000000-0000-4000-8000-00000000000${n}`;

  it('sends each (tenant, project) pair once and the keys in key order, each pointing at its pair', () => {
    const keys = [
      { tenantId: t2, projectId: pa, traceId: tr(1) },
      { tenantId: t1, projectId: pb, traceId: tr(2) },
      { tenantId: t1, projectId: pa, traceId: tr(3) },
      { tenantId: t1, projectId: pb, traceId: tr(1) },
    ];
    const p = traceKeyParams(keys, (k) => k);
    expect(p.tenants).toEqual([t1, t1, t2]);
    expect(p.projects).toEqual([pa, pb, pa]);
    expect(p.pairs).toEqual([1, 2, 2, 3]);
    expect(p.traces).toEqual([tr(3), tr(1), tr(2), tr(1)]);
    expect(p.rows).toEqual([keys[2], keys[3], keys[1], keys[0]]);
    // Each key given points at its row.
    expect(p.rowOf).toEqual([3, 2, 0, 1]);
  });

  it('folds spellings of one key into one row, merged, and points every key given at it', () => {
    const lower = { tenantId: t1, projectId: pa, traceId: tr(1).replace('-8000-', '-a000-'), n: 1 };
    const upper = { tenantId: t1.toUpperCase(), projectId: pa, traceId: lower.traceId.toUpperCase(), n: 2 };
    const p = traceKeyParams([upper, lower, upper], (k) => ({ ...k }), (row, k) => (row.n += k.n));
    expect(p.rows).toHaveLength(1);
    expect(p.rows[0].n).toBe(5);
    expect(p.traces).toEqual([lower.traceId]);
    expect(p.tenants).toEqual([t1]);
    expect(p.rowOf).toEqual([0, 0, 0]);
  });
});
