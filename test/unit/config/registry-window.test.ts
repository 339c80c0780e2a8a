import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';

describe('TRACE_REGISTRY_WINDOW_HOURS', () => {
  it('is unset by default: the stored-trace registry keeps rows for the spans\' lifetime', () => {
    expect(loadConfig({}).traceRegistryWindowMs).toBeNull();
    expect(loadConfig({ TRACE_REGISTRY_WINDOW_HOURS: '' }).traceRegistryWindowMs).toBeNull();
  });

  it('takes hours, fractions included', () => {
    expect(loadConfig({ TRACE_REGISTRY_WINDOW_HOURS: '24' }).traceRegistryWindowMs).toBe(24 * 3_600_000);
    expect(loadConfig({ TRACE_REGISTRY_WINDOW_HOURS: '1.5' }).traceRegistryWindowMs).toBe(5_400_000);
  });

  it('refuses less than an hour and anything not a number at start-up', () => {
    for (const raw of ['0', '0.5', '-3', 'a day']) {
      expect(() => loadConfig({ TRACE_REGISTRY_WINDOW_HOURS: raw })).toThrow(/TRACE_REGISTRY_WINDOW_HOURS must be a number of hours, at least 1/);
    }
  });
});
