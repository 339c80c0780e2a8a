/**
 * mapInSlices (src/compute/yielding.ts): the result is a plain map, and a slice yields to the
 * event loop after SLICE_MS even before its item count, so a few costly items never hold the loop
 * for long.
 */
import { describe, expect, it } from 'vitest';
import { mapInSlices, SLICE_MS } from '../../../src/compute/yielding.js';

/** Spins for `ms` on the calling thread (a costly item). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe('mapInSlices', () => {
  it('maps every item in order', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    expect(await mapInSlices(items, (i) => i * 2, 7)).toEqual(items.map((i) => i * 2));
  });

  it('yields after SLICE_MS even when the slice count is not reached', async () => {
    // Counts turns of the event loop (one per check phase) while items of 4 ms are mapped in one
    // "slice" of 100: each slice ends once SLICE_MS (10 ms) has passed, so after at most three
    // items, whatever else the machine does. Without the time bound all 20 see the same turn.
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const seen = await mapInSlices(Array.from({ length: 20 }, (_, i) => i), () => {
      spin(4);
      return turns;
    }, 100);
    running = false;
    expect(SLICE_MS).toBeLessThan(12);
    expect(new Set(seen).size).toBeGreaterThanOrEqual(Math.ceil(20 / 3));
  });
});
