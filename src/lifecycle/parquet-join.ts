/**
 * Parquet files joined into one as they stream (docs/data-lifecycle.md "Getting your data out"): a
 * Parquet export is read in slices like the others (export-slices.ts), each slice a complete Parquet
 * file written by the engine, and the client gets one file of all their row groups.
 *
 * A Parquet file is `PAR1`, the row groups' column chunks, the footer (a Thrift compact-protocol
 * FileMetaData indexing every row group by absolute byte offsets), the footer's length (4 bytes,
 * little-endian) and `PAR1` (Apache Parquet format specification, "File format"). So the join sends
 * each slice's bytes between its leading magic and its footer as they come, holding back only the
 * last TAIL_BYTES of a slice (where its footer is), keeps each footer's row groups with their offsets
 * moved to where the bytes landed in the joined file, and ends with one footer listing them all.
 * Memory: the held-back tail and the footers' row-group entries, whatever the rows.
 *
 * The footer is decoded and re-encoded field by field with the types it was written with (Apache
 * Thrift's compact protocol, the `thrift` package), so whatever the writer put there survives,
 * except the page index: its offset index holds absolute page offsets inside bytes already sent, so
 * slices are written without one (PARQUET_SLICE_SETTINGS) and any reference to one is dropped.
 */
import thrift, { type Thrift as ThriftTypes } from 'thrift';
import type Int64 from 'node-int64';

const { TBufferedTransport, TCompactProtocol, TFramedTransport, Thrift } = thrift;
const T = Thrift.Type;

const MAGIC = Buffer.from('PAR1');

/** The end of a slice held back until it ends: its footer must fit (a million-row slice's is tens of KiB). */
export const TAIL_BYTES = 4 * 1024 * 1024;

/** Settings of every slice's statement: no page index (see above). */
export const PARQUET_SLICE_SETTINGS = { output_format_parquet_write_page_index: 0 };

type WireType = ThriftTypes.Type;
/** A decoded Thrift value: what each wire type reads as (i64 as node-int64's Int64, binary as a Buffer). */
export type Value = boolean | number | Int64 | Buffer | Struct | List;
export interface Field {
  id: number;
  type: WireType;
  value: Value;
}
export interface Struct {
  fields: Field[];
}
export interface List {
  etype: WireType;
  items: Value[];
  set: boolean;
}

type Protocol = InstanceType<typeof TCompactProtocol>;

function readValue(p: Protocol, type: WireType): Value {
  switch (type) {
    case T.BOOL: return p.readBool();
    case T.BYTE: return p.readByte();
    case T.I16: return p.readI16();
    case T.I32: return p.readI32();
    case T.I64: return p.readI64();
    case T.DOUBLE: return p.readDouble();
    case T.STRING: return p.readBinary();
    case T.STRUCT: return readStruct(p);
    case T.LIST:
    case T.SET: {
      const header = type === T.LIST ? p.readListBegin() : p.readSetBegin();
      const items = Array.from({ length: header.size }, () => readValue(p, header.etype));
      return { etype: header.etype, items, set: type === T.SET };
    }
    default: throw new Error(`Parquet footer: Thrift type ${type} is not one a footer uses`);
  }
}

function readStruct(p: Protocol): Struct {
  const fields: Field[] = [];
  p.readStructBegin();
  for (let f = p.readFieldBegin(); f.ftype !== T.STOP; f = p.readFieldBegin()) {
    fields.push({ id: f.fid, type: f.ftype, value: readValue(p, f.ftype) });
    p.readFieldEnd();
  }
  p.readStructEnd();
  return { fields };
}

function writeValue(p: Protocol, type: WireType, value: Value): void {
  switch (type) {
    case T.BOOL: return p.writeBool(value as boolean);
    case T.BYTE: return p.writeByte(value as number);
    case T.I16: return p.writeI16(value as number);
    case T.I32: return p.writeI32(value as number);
    case T.I64: return p.writeI64(value as Int64 | number);
    case T.DOUBLE: return p.writeDouble(value as number);
    case T.STRING: return p.writeBinary(value as Buffer);
    case T.STRUCT: return writeStruct(p, value as Struct);
    default: {
      const list = value as List;
      if (list.set) p.writeSetBegin(list.etype, list.items.length);
      else p.writeListBegin(list.etype, list.items.length);
      for (const item of list.items) writeValue(p, list.etype, item);
      if (list.set) p.writeSetEnd();
      else p.writeListEnd();
    }
  }
}

function writeStruct(p: Protocol, struct: Struct): void {
  p.writeStructBegin('');
  for (const field of struct.fields) {
    p.writeFieldBegin('', field.type, field.id);
    writeValue(p, field.type, field.value);
    p.writeFieldEnd();
  }
  p.writeFieldStop();
  p.writeStructEnd();
}

/** A footer's FileMetaData as fields with their wire types. */
export function decodeFooter(bytes: Buffer): Struct {
  return readStruct(new TCompactProtocol(new TFramedTransport(bytes)));
}

export function encodeFooter(meta: Struct): Buffer {
  let out = Buffer.alloc(0);
  const transport = new TBufferedTransport(undefined, (bytes?: Buffer) => {
    if (bytes) out = Buffer.concat([out, bytes]);
  });
  writeStruct(new TCompactProtocol(transport), meta);
  transport.flush();
  return out;
}

const field = (struct: Struct, id: number) => struct.fields.find((f) => f.id === id);
const i64 = (value: Value) => (typeof value === 'number' ? value : (value as Int64).toNumber(false));

/** Field ids of parquet.thrift that the join reads or rewrites. */
const FILE = { schema: 2, numRows: 3, rowGroups: 4 };
const ROW_GROUP = { columns: 1, fileOffset: 5, ordinal: 7 };
const COLUMN_CHUNK = { fileOffset: 2, metaData: 3, offsetIndexOffset: 4, offsetIndexLength: 5, columnIndexOffset: 6, columnIndexLength: 7 };
const COLUMN_META = { dataPageOffset: 9, indexPageOffset: 10, dictionaryPageOffset: 11, bloomFilterOffset: 14 };
const PAGE_INDEX = new Set([COLUMN_CHUNK.offsetIndexOffset, COLUMN_CHUNK.offsetIndexLength, COLUMN_CHUNK.columnIndexOffset, COLUMN_CHUNK.columnIndexLength]);

/** Adds `delta` to the i64 offsets among `ids` of a struct. */
function moveOffsets(struct: Struct, ids: readonly number[], delta: number): void {
  for (const f of struct.fields) if (ids.includes(f.id)) f.value = i64(f.value) + delta;
}

/** The footers of consecutive files as one: their row groups in order, offsets moved to where each file's bytes landed. */
export class FooterJoin {
  private first: Struct | null = null;
  private schema: Buffer | null = null;
  private readonly rowGroups: Value[] = [];
  private rows = 0;

  /** A file's footer, its byte `x` now at `x + delta` of the joined file. */
  add(footer: Buffer, delta: number): void {
    const meta = decodeFooter(footer);
    const schema = encodeFooter({ fields: [field(meta, FILE.schema)!] });
    if (this.schema === null) {
      this.first = meta;
      this.schema = schema;
    } else if (!schema.equals(this.schema)) {
      throw new Error('Parquet slices with different schemas cannot be joined');
    }
    this.rows += i64(field(meta, FILE.numRows)!.value);
    for (const group of (field(meta, FILE.rowGroups)?.value as List | undefined)?.items ?? []) {
      const rowGroup = group as Struct;
      moveOffsets(rowGroup, [ROW_GROUP.fileOffset], delta);
      const ordinal = field(rowGroup, ROW_GROUP.ordinal);
      if (ordinal) ordinal.value = this.rowGroups.length;
      for (const chunk of (field(rowGroup, ROW_GROUP.columns)!.value as List).items as Struct[]) {
        chunk.fields = chunk.fields.filter((f) => !PAGE_INDEX.has(f.id));
        moveOffsets(chunk, [COLUMN_CHUNK.fileOffset], delta);
        const columnMeta = field(chunk, COLUMN_CHUNK.metaData);
        if (columnMeta) moveOffsets(columnMeta.value as Struct, Object.values(COLUMN_META), delta);
      }
      this.rowGroups.push(rowGroup);
    }
  }

  /** The joined file's footer with its length and closing magic. */
  end(): Buffer {
    if (this.first === null) throw new Error('no Parquet file to join');
    const fields = this.first.fields.map((f) => {
      if (f.id === FILE.numRows) return { ...f, value: this.rows };
      if (f.id === FILE.rowGroups) return { ...f, value: { etype: T.STRUCT, items: this.rowGroups, set: false } };
      return f;
    });
    const footer = encodeFooter({ fields });
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length);
    return Buffer.concat([footer, length, MAGIC]);
  }
}

/**
 * Complete Parquet files, one after another, as one Parquet file: each file's row-group bytes pass
 * through as they arrive (the next file is read only once they were taken), its footer is kept.
 */
export async function* joinParquet(files: AsyncIterable<AsyncIterable<Uint8Array>>, tailBytes = TAIL_BYTES): AsyncGenerator<Uint8Array> {
  const footers = new FooterJoin();
  // The magic goes out with the first slice's first bytes, so nothing is sent before a statement answered.
  let started = false;
  let written = MAGIC.length;
  for await (const file of files) {
    // The file's byte x (x >= 4, after its magic) lands at `written + x - 4`.
    const delta = written - MAGIC.length;
    let head = 0;
    const held: Buffer[] = [];
    let heldBytes = 0;
    for await (const chunk of file) {
      let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (head < MAGIC.length) {
        const skip = Math.min(MAGIC.length - head, bytes.length);
        if (!bytes.subarray(0, skip).equals(MAGIC.subarray(head, head + skip))) throw new Error('a Parquet slice does not start with PAR1');
        head += skip;
        bytes = bytes.subarray(skip);
      }
      if (bytes.length === 0) continue;
      held.push(bytes);
      heldBytes += bytes.length;
      while (heldBytes - held[0].length >= tailBytes) {
        const out = held.shift()!;
        heldBytes -= out.length;
        written += out.length;
        if (!started) {
          started = true;
          yield MAGIC;
        }
        yield out;
      }
    }
    const tail = Buffer.concat(held, heldBytes);
    if (tail.length < 8 || !tail.subarray(tail.length - 4).equals(MAGIC)) throw new Error('a Parquet slice does not end with PAR1');
    const footerLength = tail.readUInt32LE(tail.length - 8);
    const footerAt = tail.length - 8 - footerLength;
    if (footerAt < 0) throw new Error(`a Parquet slice's footer (${footerLength} bytes) is longer than the ${tailBytes} bytes held back`);
    if (footerAt > 0) {
      written += footerAt;
      if (!started) {
        started = true;
        yield MAGIC;
      }
      yield tail.subarray(0, footerAt);
    }
    // A copy: the footer's values would otherwise keep the whole tail alive until the end.
    footers.add(Buffer.from(tail.subarray(footerAt, tail.length - 8)), delta);
  }
  if (!started) yield MAGIC;
  yield footers.end();
}
