import v8 from 'node:v8';

/**
 * A large read-only value (the cost module's price catalog) given to the compute pool once per
 * version instead of cloned into every task. The main thread serializes it once (v8.serialize: the
 * structured-clone format tasks use anyway, so the worker's copy is exactly what a clone would be)
 * into a SharedArrayBuffer, which a task message carries without copying; a worker deserializes a
 * version once and keeps it until a task names another one.
 *
 * The value must be immutable: identity is the version (a new object is a new version), and a
 * mutation after sharing would not reach the workers.
 */

export interface SharedValueRef {
  id: number;
  bytes: SharedArrayBuffer;
}

const shared = new WeakMap<object, SharedValueRef>();
let nextId = 1;

/** On the main thread: the reference to put in a task's input for `value`. */
export function shareValue(value: object): SharedValueRef {
  let ref = shared.get(value);
  if (!ref) {
    const serialized = v8.serialize(value);
    const bytes = new SharedArrayBuffer(serialized.byteLength);
    new Uint8Array(bytes).set(serialized);
    ref = { id: nextId++, bytes };
    shared.set(value, ref);
  }
  return ref;
}

/** Per thread and per derivation: the last version received and what was derived from it. */
const held = new WeakMap<(value: unknown) => unknown, { id: number; derived: unknown }>();

/**
 * In a task (worker or inline): `derive(value)` for the shared value, computed once per version on
 * this thread — the value is deserialized only when the version changes.
 */
export function fromSharedValue<T>(ref: SharedValueRef, derive: (value: unknown) => T): T {
  let entry = held.get(derive);
  if (entry?.id !== ref.id) held.set(derive, (entry = { id: ref.id, derived: derive(v8.deserialize(Buffer.from(ref.bytes))) }));
  return entry.derived as T;
}
