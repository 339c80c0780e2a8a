import { join, param, raw, sql, type Fragment, type Param } from './sql/fragment.js';
import type { ReadOptions, WriteLane } from './sql/statement-runner.js';
import { quoteString } from './sql/typed-literal.js';

/** What the insert needs of a store: its reads and commands (the system lane). */
export interface ReplicaStatements {
  read<Row = Record<string, unknown>>(statement: Fragment, options: ReadOptions): Promise<Row[]>;
  command(statement: Fragment, lane: WriteLane): Promise<void>;
}

/** Where the rows go: `database`.`table` on every replica of `cluster`, reached as Lookout's own user. */
export interface ReplicaTarget {
  cluster: string;
  database: string;
  table: string;
  user: string;
  password: string;
}

/** Column names come from code (the row objects' keys); checked for shape all the same. */
const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A row's value bound with a type INSERT … SELECT converts to the column's (as the JSON insert would). */
function bound(value: string | number): Param {
  if (typeof value === 'string') return param('String', value);
  return param(Number.isInteger(value) ? 'Int64' : 'Float64', value);
}

/**
 * Inserts `rows` into a table kept whole on every node (a Join table, which does not replicate) on
 * each replica the cluster's configuration lists, through remote(): INSERT INTO FUNCTION remote(…)
 * SELECT the rows. The rows' values are bound like every other value (server parameters on a
 * server, typed literals on the embedded engine). remote()'s own arguments are the configured
 * address, our database and table names and Lookout's credentials, written as literals: a table
 * function takes constants there, and the engine hides the credentials it finds in them in its logs.
 */
export async function insertOnEveryReplica(store: ReplicaStatements, target: ReplicaTarget, rows: readonly Record<string, string | number>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const select = join(rows.map((row) => sql`SELECT ${join(columns.map((c) => bound(row[c])))}`), ' UNION ALL ');
  for (const c of columns) if (!COLUMN.test(c)) throw new Error(`refusing the column name ${JSON.stringify(c)}`);
  const columnList = raw(columns.map((c) => `\`${c}\``).join(', '));
  const replicas = await store.read<{ address: string }>(
    sql`SELECT DISTINCT concat(host_address, ':', toString(port)) AS address FROM system.clusters WHERE cluster = ${param('String', target.cluster)}`,
    { lane: 'system' },
  );
  for (const { address } of replicas) {
    const remote = raw(`remote(${[address, target.database, target.table, target.user, target.password].map(quoteString).join(', ')})`);
    await store.command(sql`INSERT INTO FUNCTION ${remote} (${columnList}) ${select}`, 'system');
  }
}
