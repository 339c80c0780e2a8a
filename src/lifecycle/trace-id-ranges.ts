/**
 * The trace export's slices (trace-export.ts): consecutive ranges of trace ids rather than of time.
 * `spans` is sorted by trace id within a project (clickhouse/001_spans.sql), so every span of a
 * trace — whenever it started — lies in the one range its id falls in, and a statement bounded to a
 * range reads only that range's granules of each part. Time cannot bound that read: within a part
 * the spans of any one minute are spread over the whole id order, so a statement that finds a
 * minute's traces by id reads nearly every granule of the project, and a window read in time slices
 * read the project's spans once per slice. Read by id range, the export reads them once in all.
 *
 * The cut comes from a count of the window's spans per trace id prefix (PREFIX_CHARS characters:
 * Lookout's trace ids are UUIDs of SHA-1 hashes, so spread evenly over the prefixes), packed into
 * ranges of at most a bound of spans. A prefix is never split, so one holding more than the bound
 * is a range of its own. The ranges cover every string: the first has no lower bound, the last no
 * upper one, and each cut is a prefix the engine itself listed, compared by the engine as it sorts.
 */

/** Characters of the trace id the window's spans are counted by: 4,096 prefixes of hex ids. */
export const PREFIX_CHARS = 3;

/** The window's spans whose trace id starts with `prefix`, as the engine counted them. */
export interface PrefixCount {
  prefix: string;
  rows: number;
}

/** Trace ids from `from` (inclusive) to `to` (exclusive); null: no bound on that side. */
export interface TraceIdRange {
  from: string | null;
  to: string | null;
}

/**
 * The prefixes (in the engine's order, byte by byte) packed into consecutive ranges of at most
 * `maxRows` counted spans each, together covering every trace id exactly once. No prefixes (an
 * empty window) is one range of everything: the statement still answers, with nothing.
 */
export function cutTraceIdRanges(prefixes: readonly PrefixCount[], maxRows: number): TraceIdRange[] {
  const cuts: string[] = [];
  let rows = 0;
  for (const { prefix, rows: n } of prefixes) {
    if (rows > 0 && rows + n > maxRows) {
      cuts.push(prefix);
      rows = 0;
    }
    rows += n;
  }
  const bounds = [null, ...cuts, null];
  return bounds.slice(1).map((to, i) => ({ from: bounds[i], to }));
}
