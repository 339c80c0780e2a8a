import thrift from 'thrift';
import { describe, expect, it } from 'vitest';
import { decodeFooter, encodeFooter, joinParquet, type Field, type List, type Struct } from '../../../src/lifecycle/parquet-join.js';

/**
 * Parquet files joined into one (src/lifecycle/parquet-join.ts), on files made here: each file's
 * bytes between its magic and its footer land in the joined file at the offsets its moved footer
 * entries name, the footer lists every row group with its fields and wire types kept, the page
 * index references are dropped, and what is not a Parquet file, or a footer too long to hold back,
 * is refused. The engine's own files are joined and read back in
 * test/integration/lifecycle/export-parquet-slices.test.ts.
 */
const T = thrift.Thrift.Type;
const f = (id: number, type: number, value: Field['value']): Field => ({ id, type, value });
const list = (etype: number, items: Field['value'][]): List => ({ etype, items, set: false });

/** A column chunk whose data page sits at `at` (absolute), with a page-index reference and a bloom filter offset. */
const chunk = (at: number): Struct => ({
  fields: [
    f(2, T.I64, at),
    f(3, T.STRUCT, { fields: [f(1, T.I32, 6), f(3, T.LIST, list(T.STRING, [Buffer.from('col')])), f(9, T.I64, at), f(14, T.I64, at + 4), f(15, T.I32, 4)] }),
    f(4, T.I64, at + 100), f(5, T.I32, 10), f(6, T.I64, at + 110), f(7, T.I32, 10),
  ],
});

/** A file: PAR1, one row group per payload (its column chunk pointing at the payload), the footer, its length, PAR1. */
function parquetFile(payloads: string[], rowsEach: number, schema = 'col'): Buffer {
  const body: Buffer[] = [Buffer.from('PAR1')];
  let at = 4;
  const groups: Struct[] = [];
  for (const payload of payloads) {
    groups.push({ fields: [f(1, T.LIST, list(T.STRUCT, [chunk(at)])), f(2, T.I64, payload.length), f(3, T.I64, rowsEach), f(5, T.I64, at), f(7, T.I16, groups.length)] });
    body.push(Buffer.from(payload));
    at += payload.length;
  }
  const footer = encodeFooter({
    fields: [
      f(1, T.I32, 2),
      f(2, T.LIST, list(T.STRUCT, [{ fields: [f(4, T.STRING, Buffer.from(schema)), f(5, T.I32, 1)] }])),
      f(3, T.I64, rowsEach * payloads.length),
      f(4, T.LIST, list(T.STRUCT, groups)),
      f(6, T.STRING, Buffer.from('test writer')),
    ],
  });
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length);
  return Buffer.concat([...body, footer, length, Buffer.from('PAR1')]);
}

/** A file's bytes in chunks of `size`. */
async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function join(files: Buffer[], size = 7, tailBytes?: number): Promise<Buffer> {
  async function* each() {
    for (const file of files) yield chunked(file, size);
  }
  const out: Uint8Array[] = [];
  for await (const part of joinParquet(each(), tailBytes)) out.push(part);
  return Buffer.concat(out);
}

const num = (v: Field['value']) => (typeof v === 'number' ? v : Number((v as { toNumber(): number }).toNumber()));
const get = (s: Struct, id: number) => s.fields.find((x) => x.id === id)!;

describe('joining Parquet files', () => {
  it('puts every row group where its moved offsets say, in one footer with the rows added up', async () => {
    const joined = await join([parquetFile(['aaaa-1', 'bbbb-22'], 10), parquetFile(['cc-333'], 5), parquetFile([], 0)]);
    expect(joined.subarray(0, 4).toString()).toBe('PAR1');
    expect(joined.subarray(joined.length - 4).toString()).toBe('PAR1');
    const length = joined.readUInt32LE(joined.length - 8);
    const meta = decodeFooter(joined.subarray(joined.length - 8 - length, joined.length - 8));

    expect(num(get(meta, 3).value)).toBe(25);
    expect(get(meta, 6).value).toEqual(Buffer.from('test writer'));
    const groups = (get(meta, 4).value as List).items as Struct[];
    expect(groups).toHaveLength(3);
    const payloads = groups.map((g) => {
      const column = ((get(g, 1).value as List).items[0] as Struct);
      const columnMeta = get(column, 3).value as Struct;
      const at = num(get(columnMeta, 9).value);
      // Moved alike: the row group's, the chunk's and the bloom filter's offsets.
      expect(num(get(g, 5).value)).toBe(at);
      expect(num(get(column, 2).value)).toBe(at);
      expect(num(get(columnMeta, 14).value)).toBe(at + 4);
      // The page index references are gone; the rest keeps its wire types (the ordinal an i16, renumbered).
      expect(column.fields.map((x) => x.id)).toEqual([2, 3]);
      expect(get(g, 7).type).toBe(T.I16);
      return joined.subarray(at, at + num(get(g, 2).value)).toString();
    });
    expect(payloads).toEqual(['aaaa-1', 'bbbb-22', 'cc-333']);
    expect(groups.map((g) => get(g, 7).value)).toEqual([0, 1, 2]);
  });

  it('decodes and encodes a footer to the same bytes', () => {
    const file = parquetFile(['xyz'], 3);
    const length = file.readUInt32LE(file.length - 8);
    const footer = file.subarray(file.length - 8 - length, file.length - 8);
    expect(encodeFooter(decodeFooter(footer))).toEqual(footer);
  });

  it('joins one empty file into an empty file', async () => {
    const joined = await join([parquetFile([], 0)], 1);
    const length = joined.readUInt32LE(joined.length - 8);
    expect(num(get(decodeFooter(joined.subarray(joined.length - 8 - length, joined.length - 8)), 3).value)).toBe(0);
  });

  it('refuses what is not a Parquet file, files of different columns, and a footer longer than it holds back', async () => {
    await expect(join([Buffer.from('not parquet at all')])).rejects.toThrow(/PAR1/);
    await expect(join([parquetFile(['a'], 1), parquetFile(['b'], 1, 'other')])).rejects.toThrow(/different schemas/);
    // Held back: the last 64 bytes; the footer is longer, and its start went out already.
    await expect(join([parquetFile(['x'.repeat(500)], 1)], 16, 64)).rejects.toThrow(/longer than the 64 bytes/);
    expect((await join([parquetFile(['x'.repeat(500)], 1)], 16, 4096)).length).toBeGreaterThan(500);
  });
});
