import { Readable } from 'node:stream';
import type { ClickHouseStore } from './clickhouse.js';

/**
 * Inserts rows already serialized as JSONEachRow lines (on the compute pool, or in slices), as one
 * body: the client's own insert would JSON.stringify every row on the event loop in one go.
 */
export async function insertJsonLines(ch: ClickHouseStore, table: string, lines: string[]): Promise<void> {
  if (lines.length === 0) return;
  const result = await ch.client.exec({
    query: `INSERT INTO ${ch.table(table)} FORMAT JSONEachRow`,
    values: Readable.from([`${lines.join('\n')}\n`], { objectMode: false }),
  });
  // Nothing to read, but the answer must be consumed to release the connection.
  result.stream.resume();
  await new Promise<void>((resolve, reject) => {
    result.stream.once('end', resolve).once('close', resolve).once('error', reject);
  });
}
