import { describe, expect, it } from 'vitest';
import { isOtelTraceId, isTraceUuid, lookoutTraceId } from '../../../src/spans/trace-id.js';

describe('Lookout trace id', () => {
  const project = '3f0c7a9e-2b1d-4c5e-8f6a-1b2c3d4e5f60';
  const otel = '5b8efff798038103d269b633813fc60c';

  it('is a deterministic version-5 UUID of (project, otel trace id)', () => {
    const id = lookoutTraceId(project, otel);
    expect(isTraceUuid(id)).toBe(true);
    expect(id[14]).toBe('5');
    expect('89ab').toContain(id[19]);
    expect(lookoutTraceId(project, otel)).toBe(id);
    expect(lookoutTraceId(project, otel.toUpperCase())).toBe(id);
  });

  it('differs per project and per trace', () => {
    const id = lookoutTraceId(project, otel);
    expect(lookoutTraceId('another-project', otel)).not.toBe(id);
    expect(lookoutTraceId(project, '5b8efff798038103d269b633813fc60d')).not.toBe(id);
  });

  it('tells the two id forms apart', () => {
    expect(isOtelTraceId(otel)).toBe(true);
    expect(isOtelTraceId(lookoutTraceId(project, otel))).toBe(false);
  });
});
