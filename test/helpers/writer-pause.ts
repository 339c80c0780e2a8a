import type { IngestWriter } from '../../src/ingest/write/ingest-writer.js';

/**
 * Holds the writer's next flush between its duplicate check and its inserts (the window in which
 * another process can store the same trace): `paused` resolves once it is held, `resume()` lets it go on.
 */
export function pauseNextFlush(writer: IngestWriter): { paused: Promise<void>; resume: () => void } {
  let held!: () => void;
  const paused = new Promise<void>((resolve) => (held = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  writer.afterDuplicateCheck = async () => {
    writer.afterDuplicateCheck = null;
    held();
    await released;
  };
  return { paused, resume: () => release() };
}
