/**
 * Main-thread work that cannot move to the compute pool (it needs state that lives on the main
 * thread, such as the cost module's price catalog) is done in slices, yielding to the event loop
 * between them, so a settling round of thousands of traces never holds it for long.
 */

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Maps `items` in slices of `slice`, yielding to the event loop between slices. */
export async function mapInSlices<T, R>(items: T[], fn: (item: T) => R, slice = 100): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  for (let i = 0; i < items.length; i += slice) {
    if (i > 0) await yieldToLoop();
    const end = Math.min(items.length, i + slice);
    for (let j = i; j < end; j++) out[j] = fn(items[j]);
  }
  return out;
}
