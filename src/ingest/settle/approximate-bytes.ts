/**
 * A cheap estimate of the heap a plain-data value holds (strings at two bytes a character, a word
 * per number or boolean, a small overhead per object and array slot), without building a string of
 * it: bounding a queue by bytes needs the size of each entry, and JSON.stringify of a trace's span
 * attributes would cost as much as the copy it guards against. An estimate, not a measurement:
 * good enough to bound memory within a small factor.
 */
const OBJECT_OVERHEAD = 32;
const SLOT = 8;

export function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length * 2;
  if (value === null || typeof value !== 'object') return SLOT;
  let bytes = OBJECT_OVERHEAD;
  if (Array.isArray(value)) {
    for (const item of value) bytes += SLOT + approximateBytes(item);
    return bytes;
  }
  for (const key in value as Record<string, unknown>) {
    bytes += SLOT + key.length + approximateBytes((value as Record<string, unknown>)[key]);
  }
  return bytes;
}
