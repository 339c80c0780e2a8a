import { packedToolSpanId, type PackedToolRow } from '../write/packed-tool-rows.js';
import type { TraceNote } from '../write/ingest-writer.js';
import type { Claim, RecordedRow } from './settle-queue.js';
import { traceKeyString, type TraceKey } from '../../spans/stored-spans.js';

/**
 * The spans of open traces that came through this process, kept so the settler can summarize
 * without reading them back from ClickHouse. Only an optimization: the settle queue is the truth,
 * and an entry is used only when it provably holds the whole trace —
 *
 * - it belongs to the same queue row lifetime as the claim (`rowId`), and
 * - every upsert of that row was this process's own (`seq` at claim = upserts counted here: seq
 *   starts at 1 when the row is created and each flush that touches the trace adds 1), and
 * - no span of the trace was in ClickHouse before this process's first write to it and none it
 *   does not hold appeared later (`storedBeforeCount` of every write ≤ spans held: every span held
 *   was durable before that write, so the stored spans are exactly the held ones). The writer reports
 *   at least 1 for a trace the stored-trace registry held before the flush, so a trace another
 *   process is writing at the same moment (its spans not yet visible) is never taken as whole here;
 * - and, with the registry, every registration of the trace was this process's own: each write's
 *   `registeredSeq` follows the previous one by 1, and the registry still says so when the flush
 *   records it (`registrations` of the queue upsert). Another process registers a trace before it
 *   stores spans of it, so spans of another process's flush that stalled past this entry's creation,
 *   or that settled in a queue row of their own before this flush recorded, are never missed.
 *
 * Spans are held as the `spans` rows this process wrote (JSONCompactEachRow lines), with the
 * generation.completed lines it wrote for them (settling rewrites only the rows the whole trace
 * changes), in chunks: the lines one flush note adds are copied out of the insert body into one
 * buffer of their own (one copy, not a view per line: a view per span and a map entry per span cost
 * the event loop more than the copy did). The settler hands a trace's chunks to the compute pool as
 * one byte buffer (settle-summaries.ts). A trace past `maxSpansPerTrace` is read back instead, so
 * one copy to a worker stays short. The cache is bounded by spans and by bytes (`maxBytes`,
 * SETTLE_CACHE_MAX_BYTES): under overload 128,000 cached spans held ~500 MiB of the service's heap,
 * outside the ingest budget (bench/isolation overload).
 *
 * Anything else (another process wrote spans, a late span after an earlier settle, a restart, the
 * span budget ran out) reads the trace back from ClickHouse, and `take` says which (`ReadBackReason`,
 * counted as lookout_settle_read_backs_total): sizing SETTLE_CACHE_MAX_BYTES needs to know whether
 * read-backs come from the bounds or from other writers. Dropping entries is always safe.
 */

/**
 * Why a claimed trace is not held here whole (the first cause that happened to its entry):
 * - `not_held`: no entry (recorded by another process only, swept, or this process restarted);
 * - `stored_before`: spans of it were in ClickHouse before this process's first write (a late span);
 * - `other_registrations`: another process registered the trace meanwhile;
 * - `span_bound` / `trace_span_bound` / `byte_bound`: the spans held in all (`maxSpans`), the
 *   per-trace bound or the bytes (SETTLE_CACHE_MAX_BYTES) ran out while it was held;
 * - `other_upserts`: the claim counts queue upserts this process did not make (another process's
 *   flush, a log record, a newer queue row).
 */
export type ReadBackReason = 'not_held' | 'stored_before' | 'other_registrations' | 'span_bound' | 'trace_span_bound' | 'byte_bound' | 'other_upserts';
type ForgetReason = Exclude<ReadBackReason, 'not_held' | 'other_upserts'>;

/** Heap bytes of one held span beside its line: its id in the set, string headers. */
const SPAN_ENTRY_OVERHEAD = 120;

/**
 * What one held line costs against `maxBytes`: its UTF-8 bytes plus the overhead. The lines are held
 * as copies, never as views into the request's insert body: one held view would keep the whole body
 * alive, so a long trace with a span in each of many requests pinned every request's body while
 * being charged a line of each.
 */
const lineBytes = (id: string, line: Uint8Array) => SPAN_ENTRY_OVERHEAD + id.length + line.byteLength;

/**
 * The lines `picked` (indexes into `lines`, in order) copied into one buffer of their own. Lines that
 * lie back to back in one body (a note's spans, as the writer encoded them) are copied at once.
 */
function copyLines(lines: readonly Uint8Array[], picked: readonly number[]): Uint8Array {
  if (picked.length === 0) return new Uint8Array(0);
  const first = lines[picked[0]];
  let total = 0;
  let adjacent = true;
  let end = first.byteOffset;
  for (const i of picked) {
    const line = lines[i];
    total += line.byteLength;
    if (line.buffer !== first.buffer || line.byteOffset !== end) adjacent = false;
    end = line.byteOffset + line.byteLength;
  }
  if (adjacent) return new Uint8Array(first.buffer.slice(first.byteOffset, first.byteOffset + total));
  const buffer = new Uint8Array(total);
  let at = 0;
  for (const i of picked) {
    buffer.set(lines[i], at);
    at += lines[i].byteLength;
  }
  return buffer;
}

interface CacheEntry {
  rowId: string;
  /** Upserts of the row made by this process. */
  upserts: number;
  /** The seq of the last upsert counted (notes of one flush share one upsert). */
  lastSeq: string;
  /** The trace's registry count after this process's last registration; null before the first or without a registry. */
  registrations: number | null;
  /** Ids of the spans held; null once the entry can no longer prove it holds the whole trace. */
  spanIds: Set<string> | null;
  /** Why `spanIds` became null. */
  forgotten: ForgetReason | null;
  /** The held spans' `spans` rows (insert lines, encoded-rows.ts), in chunks of whole lines. */
  spanChunks: Uint8Array[];
  /** tool.called rows as written at ingest (packed, as they go to the settle task), by span id. */
  toolRows: Map<string, PackedToolRow>;
  /** Span ids holding a call whose generation.completed line (as written at ingest) is held. */
  generationIds: Set<string>;
  /** Those lines, in chunks of whole lines. */
  generationChunks: Uint8Array[];
  /** Bytes charged for this entry's lines (lineBytes of each). */
  bytes: number;
  touchedAt: number;
}

export interface CachedTrace {
  /** The trace's `spans` rows as insert lines (JSONCompactEachRow, each ending in a newline), in chunks of whole lines. */
  rows: Uint8Array[];
  /** How many spans `rows` holds. */
  spans: number;
  toolRows: Map<string, PackedToolRow>;
  /** The generation.completed rows written at ingest as insert lines (JSONCompactEachRow, each ending in a newline), in chunks of whole lines. */
  generationRows: Uint8Array[];
}

export class SettleCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly own = new Map<string, TraceKey>();
  private spanCount = 0;
  private byteCount = 0;

  constructor(
    private readonly maxSpans: number,
    private readonly maxSpansPerTrace: number = 2000,
    private readonly now: () => number = Date.now,
    private readonly maxBytes: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Bytes charged for the spans held now (lineBytes). */
  get bytes(): number {
    return this.byteCount;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keys of traces this process recorded and has not seen finished (graceful shutdown settles them). */
  keys(): TraceKey[] {
    return [...this.own.values()];
  }

  /** After the writer recorded a flush: `recorded` is what the queue upsert returned, `notes` what was written. */
  add(notes: TraceNote[], recorded: RecordedRow[]): void {
    const rows = new Map(recorded.map((r) => [traceKeyString(r), r]));
    const now = this.now();
    for (const note of notes) {
      const key = traceKeyString(note);
      const row = rows.get(key);
      if (!row) continue;
      this.own.set(key, { tenantId: note.tenantId, projectId: note.projectId, traceId: note.traceId });
      let entry = this.entries.get(key);
      if (!entry || entry.rowId !== row.rowId) {
        if (entry) this.drop(key, entry);
        entry = {
          rowId: row.rowId, upserts: 0, lastSeq: '', registrations: null, spanIds: new Set(), forgotten: null, spanChunks: [], toolRows: new Map(),
          generationIds: new Set(), generationChunks: [], bytes: 0, touchedAt: now,
        };
        this.entries.set(key, entry);
      }
      // Several notes of one flush (two requests, same trace) share one upsert.
      if (entry.lastSeq !== row.seq) entry.upserts++;
      entry.lastSeq = row.seq;
      entry.touchedAt = now;
      if (!entry.spanIds) continue;
      const ids = note.spanIds ?? [];
      const lines = note.spanLines ?? [];
      if ((note.storedBeforeCount ?? 0) > entry.spanIds.size) this.forget(entry, 'stored_before');
      if (entry.spanIds && note.registeredSeq !== undefined && !this.ownRegistrations(entry, note.registeredSeq, row.registrations)) this.forget(entry, 'other_registrations');
      entry.registrations = note.registeredSeq ?? null;
      if (entry.spanIds && this.spanCount + ids.length > this.maxSpans) this.forget(entry, 'span_bound');
      if (entry.spanIds && entry.spanIds.size + ids.length > this.maxSpansPerTrace) this.forget(entry, 'trace_span_bound');
      const generationIds = note.generationIds ?? [];
      const generationLines = note.generationLines ?? [];
      if (entry.spanIds) {
        let adding = 0;
        for (let i = 0; i < ids.length; i++) adding += lineBytes(ids[i], lines[i]);
        for (let i = 0; i < generationIds.length; i++) adding += lineBytes(generationIds[i], generationLines[i]);
        if (this.byteCount + adding > this.maxBytes) this.forget(entry, 'byte_bound');
      }
      const spanIds = entry.spanIds;
      if (!spanIds) continue;
      // A span held already is the copy this process stored; one sent again is a duplicate the
      // writer did not store, so it is not what a read-back gives when its content changed
      // (before: the summary counted the re-sent copy's tokens, the event rows the stored ones).
      const adds: number[] = [];
      let added = 0;
      for (let i = 0; i < ids.length; i++) {
        if (spanIds.has(ids[i])) continue;
        spanIds.add(ids[i]);
        adds.push(i);
        added += lineBytes(ids[i], lines[i]);
      }
      if (adds.length > 0) entry.spanChunks.push(copyLines(lines, adds));
      this.spanCount += adds.length;
      // Likewise the tool.called row: a re-sent span's row (its tree context may differ) was not written.
      for (const r of note.toolRows) if (!entry.toolRows.has(packedToolSpanId(r))) entry.toolRows.set(packedToolSpanId(r), r);
      // The generation.completed rows are only those written (generationIds: of spans stored by
      // this flush), the first of each: a later row for the same call replaced nothing at ingest.
      const newGenerations: number[] = [];
      for (let i = 0; i < generationIds.length; i++) {
        if (entry.generationIds.has(generationIds[i])) continue;
        entry.generationIds.add(generationIds[i]);
        newGenerations.push(i);
        added += lineBytes(generationIds[i], generationLines[i]);
      }
      if (newGenerations.length > 0) entry.generationChunks.push(copyLines(generationLines, newGenerations));
      entry.bytes += added;
      this.byteCount += added;
    }
  }

  /**
   * Every registration of the trace since this entry began was this process's: the flush's own count
   * follows the last one seen here (the same count again: another note of the same flush), and no
   * other registration came between the flush's upsert and its record. With no count seen yet, only
   * the entry's first flush starts the chain: a later one follows flushes whose registrations were
   * not counted (no registry answer), so nothing proves the ones between were this process's.
   */
  private ownRegistrations(entry: CacheEntry, registeredSeq: number, atRecord: number | null | undefined): boolean {
    if (atRecord !== undefined && atRecord !== registeredSeq) return false;
    if (entry.registrations === null) return entry.upserts === 1;
    return registeredSeq === entry.registrations || registeredSeq === entry.registrations + 1;
  }

  /** The whole trace when this process provably holds it, else why not (read it from ClickHouse). */
  take(claim: Claim): CachedTrace | { readBack: ReadBackReason } {
    const entry = this.entries.get(traceKeyString(claim));
    if (!entry) return { readBack: 'not_held' };
    if (!entry.spanIds) return { readBack: entry.forgotten ?? 'not_held' };
    if (entry.rowId !== claim.rowId || String(entry.upserts) !== claim.seq) return { readBack: 'other_upserts' };
    return { rows: [...entry.spanChunks], spans: entry.spanIds.size, toolRows: entry.toolRows, generationRows: [...entry.generationChunks] };
  }

  /** A claim finished: the queue row is gone, and so is what was held for it. */
  finished(keys: TraceKey[]): void {
    for (const k of keys) {
      const key = traceKeyString(k);
      const entry = this.entries.get(key);
      if (entry) this.drop(key, entry);
      this.own.delete(key);
    }
  }

  /** Drops entries untouched for `ageMs` (rows another process settled are never reported here). */
  sweep(ageMs: number): void {
    const cutoff = this.now() - ageMs;
    for (const [key, entry] of this.entries) {
      if (entry.touchedAt < cutoff) {
        this.drop(key, entry);
        this.own.delete(key);
      }
    }
  }

  private forget(entry: CacheEntry, reason: ForgetReason | null): void {
    if (entry.spanIds) this.spanCount -= entry.spanIds.size;
    entry.forgotten ??= reason;
    this.byteCount -= entry.bytes;
    entry.bytes = 0;
    entry.spanIds = null;
    entry.spanChunks = [];
    entry.toolRows.clear();
    entry.generationIds.clear();
    entry.generationChunks = [];
  }

  private drop(key: string, entry: CacheEntry): void {
    this.forget(entry, null);
    this.entries.delete(key);
  }
}
