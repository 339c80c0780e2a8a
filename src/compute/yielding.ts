/**
 * Main-thread work that cannot move to the compute pool (it needs state that lives on the main
 * thread, such as the cost module's price catalog) is done in slices, yielding to the event loop
 * between them, so a settling round of thousands of traces never holds it for long.
 *
 * A slice ends after `slice` items or SLICE_MS, whichever comes first: items differ a lot in cost
 * (pricing a trace of 500 generations against one of 5), and under ingest load a fixed count of 50
 * priced traces held the loop for 200–550 ms at a time (profiled with --cpu-prof, 32 senders).
 */

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The longest a slice runs before it yields (one item always runs, however long it takes). */
export const SLICE_MS = 10;

/** Maps `items` in slices of at most `slice` items and about SLICE_MS, yielding to the event loop between them. */
export async function mapInSlices<T, R>(items: T[], fn: (item: T) => R, slice = 100): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let started = performance.now();
  let done = 0;
  for (let j = 0; j < items.length; j++) {
    if (done >= slice || (done > 0 && performance.now() - started > SLICE_MS)) {
      await yieldToLoop();
      started = performance.now();
      done = 0;
    }
    out[j] = fn(items[j]);
    done++;
  }
  return out;
}
