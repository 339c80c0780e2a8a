import v8 from 'node:v8';

/**
 * Room on this thread's heap for one native step that cannot be stopped half-way.
 *
 * A compute worker capped by COMPUTE_HEAP_MB that outgrows its cap is asked to stop, and V8 lets
 * the heap run a little past the cap (Node allows 16 MiB) until it does. JavaScript stops at
 * the next function call or loop turn, well within that; one native call does not — decoding a
 * body into a string, JSON.parse, a RegExp replace over the whole text. Such a call that overshoots
 * the allowance makes V8 abort the whole process, every tenant's requests with it. So a task asks
 * for the room before such a step and is refused (HeapRoomError: the pool answers it like a worker
 * out of memory) instead of starting a step the heap cannot hold.
 *
 * The room is the heap limit less the smallest heap this thread has been seen to use at a check:
 * a worker runs one task at a time, so what its earlier tasks left is garbage a collection frees
 * while the step runs, and the floor is what the worker itself holds (its modules and tables).
 * What the running task already holds is not counted, so tasks ask before their large steps, while
 * they hold little: a request body and read-back bytes arrive outside the heap.
 */

export class HeapRoomError extends Error {
  constructor(readonly neededBytes: number, readonly roomBytes: number) {
    super(`needs ${neededBytes} bytes of heap in one step; the heap has room for ${roomBytes}`);
    this.name = 'HeapRoomError';
  }
}

let floorBytes = Number.POSITIVE_INFINITY;
/** The room at the last reading: the floor only falls, so a step within it fits without reading again. */
let knownRoom = 0;

/** Bytes this thread's heap can still take in one step. */
export function heapRoomBytes(): number {
  const { heap_size_limit, used_heap_size } = v8.getHeapStatistics();
  floorBytes = Math.min(floorBytes, used_heap_size);
  knownRoom = heap_size_limit - floorBytes;
  return knownRoom;
}

/** Throws HeapRoomError when a step needing `bytes` at once would not fit. */
export function ensureHeapRoom(bytes: number): void {
  // Reading the heap's statistics costs a few microseconds: settling asks once per trace.
  if (bytes <= knownRoom) return;
  const room = heapRoomBytes();
  if (bytes > room) throw new HeapRoomError(bytes, room);
}

/**
 * UTF-8 bytes as a string, after making sure the heap can hold it: a string takes at most two bytes
 * per UTF-8 byte (one character outside Latin-1 makes V8 store the whole string in two-byte units).
 */
export function utf8Text(bytes: Uint8Array): string {
  ensureHeapRoom(bytes.byteLength * 2);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
