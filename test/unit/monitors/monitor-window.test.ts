import { describe, expect, it } from 'vitest';
import { ActiveWindow } from '../../../src/workspace/monitors/monitor-window.js';

const row = (trace_id: string, calls: number, matches: number) => ({ trace_id, phase: 'active' as const, calls, matches });

describe('ActiveWindow', () => {
  it('keeps the latest `size` traces: a new one enters at the top and pushes the oldest out', () => {
    const window = new ActiveWindow([row('c', 1, 1), row('b', 2, 0), row('a', 3, 3)], 3);
    expect(window.counts).toEqual({ traces: 3, calls: 6, matches: 4 });
    window.observe(row('d', 1, 0), true);
    // 'a' (the oldest) left.
    expect(window.counts).toEqual({ traces: 3, calls: 4, matches: 1 });
    window.observe(row('e', 2, 2), true);
    expect(window.counts).toEqual({ traces: 3, calls: 4, matches: 3 });
  });

  it('a trace observed again changes its counts where it stands; one that already left stays out', () => {
    const window = new ActiveWindow([row('b', 1, 0), row('a', 1, 0)], 2);
    window.observe(row('a', 4, 4), false);
    expect(window.counts).toEqual({ traces: 2, calls: 5, matches: 4 });
    window.observe(row('c', 1, 1), true);
    expect(window.counts).toEqual({ traces: 2, calls: 2, matches: 1 });
    // 'a' left the window; observed again it does not come back.
    window.observe(row('a', 9, 9), false);
    expect(window.counts).toEqual({ traces: 2, calls: 2, matches: 1 });
  });

  it('grows up to its size from an empty start', () => {
    const window = new ActiveWindow([], 2);
    expect(window.counts).toEqual({ traces: 0, calls: 0, matches: 0 });
    window.observe(row('a', 1, 1), true);
    expect(window.counts).toEqual({ traces: 1, calls: 1, matches: 1 });
  });
});
