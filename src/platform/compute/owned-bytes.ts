/**
 * Bytes as a Uint8Array that owns its whole ArrayBuffer, so it can be transferred to a worker.
 * Small Buffers are slices of Node's shared pool: transferring that would detach the pool, so
 * those (and any other slice) are copied first.
 */
export function ownedBytes(bytes: Uint8Array): Uint8Array {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
  return whole ? new Uint8Array(bytes.buffer, 0, bytes.byteLength) : new Uint8Array(bytes);
}
