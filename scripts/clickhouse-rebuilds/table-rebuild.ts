/**
 * The one recipe for rebuilding a ClickHouse table whose sorting key, key types or partition key
 * change (ALTER cannot change them in place). Migrations 009 and 010 are written by it
 * (`npm run generate:rebuilds` writes their statements below each file's hand-written header;
 * test/unit/stores/table-rebuilds.test.ts fails when a file and the recipe disagree).
 *
 * Per table, every statement safe to run again from the top after an interruption anywhere:
 *   1. carry over: a <table>_<suffix> left by a stopped earlier run may hold the old data with rows
 *      older processes wrote during its copy (stopped between EXCHANGE and catch-up): its rows the
 *      live table lacks are copied in. On a normal run the name is new and empty, and the count guard
 *      keeps the statement from reading the live table at all;
 *   2. drop that name, create the copy afresh with the new definition;
 *   3. copy every row version into it, version column included (ReplacingMergeTree then keeps the
 *      same newest row);
 *   4. swap the two by EXCHANGE TABLES (atomic);
 *   5. catch up: rows an older process wrote to the old table during the copy, compared as 8-byte
 *      hashes of key and version over the rows from an hour before the old table's newest row.
 *      Nothing writes to the old table after the swap, so that anchor cannot move — not with rows
 *      written to the new table after it, nor with a catch-up interrupted half-way;
 *   6. drop the old data.
 * The migration is recorded only after its last statement, so a finished run is never repeated.
 */

export interface RebuiltTable {
  table: string;
  /** The copy's columns as `name Type …`, in the order rows are inserted. */
  columns: string[];
  /** Data-skipping or text indexes of the copy, as `INDEX name expr TYPE …` lines after the columns. */
  indexes?: string[];
  /** The lines after the column list: ENGINE, PARTITION BY, ORDER BY, TTL, SETTINGS. */
  clauses: string[];
  /** The identity of one row version: the sorting key's columns and the version column. */
  key: string[];
  /** Per column, how a row of the old table is read into the new type; absent: the column as it is. */
  convert?: Record<string, string>;
  /** The ReplacingMergeTree version column (default inserted_at). */
  version?: string;
}

export interface TableRebuild {
  /** The copy's name is `<table>_<suffix>`. */
  suffix: string;
  /** An extra condition on the rows carried over from a stopped run (e.g. only old-typed rows). */
  carryOverOnly?: string;
  tables: RebuiltTable[];
}

const DEFAULT_VERSION = 'inserted_at';
/** Rows an older process may write during the copy: the copy of up to an hour is covered. */
const CATCH_UP_WINDOW = 'INTERVAL 1 HOUR';

function columnName(definition: string): string {
  return definition.trim().split(/\s+/)[0];
}

function expression(table: RebuiltTable, column: string): string {
  return table.convert?.[column] ?? column;
}

export function tableRebuildStatements(rebuild: TableRebuild, table: RebuiltTable): string[] {
  const live = `{db}.${table.table}`;
  const copy = `{db}.${table.table}_${rebuild.suffix}`;
  const names = table.columns.map(columnName);
  const insertInto = (target: string) => `INSERT INTO ${target} (${names.join(', ')})`;
  const select = `SELECT ${names.map((name) => expression(table, name)).join(', ')}`;
  const definitions = [...table.columns, ...(table.indexes ?? [])];
  const create = [`CREATE TABLE IF NOT EXISTS ${copy} {on_cluster}`, '(', definitions.map((c) => `    ${c}`).join(',\n'), ')', ...table.clauses].join('\n');
  const version = table.version ?? DEFAULT_VERSION;
  const anchor = `${version} >= (SELECT max(${version}) - ${CATCH_UP_WINDOW} FROM ${copy})`;
  const notYetIn = (guard: string) =>
    [
      `    AND cityHash64(${table.key.map((name) => expression(table, name)).join(', ')}) GLOBAL NOT IN (`,
      `        SELECT cityHash64(${table.key.join(', ')}) FROM ${live}`,
      `        WHERE ${guard}${anchor}`,
      '    )',
    ].join('\n');
  const copyHasRows = `(SELECT count() FROM ${copy}) > 0 AND `;
  const carryOverGuard = `${copyHasRows}${rebuild.carryOverOnly ? `${rebuild.carryOverOnly} AND ` : ''}`;
  return [
    create,
    [insertInto(live), select, `FROM ${copy}`, `WHERE ${carryOverGuard}${anchor}`, notYetIn(copyHasRows)].join('\n'),
    `DROP TABLE IF EXISTS ${copy} {on_cluster} SYNC`,
    create,
    [insertInto(copy), select, `FROM ${live}`].join('\n'),
    `EXCHANGE TABLES ${live} AND ${copy} {on_cluster}`,
    [insertInto(live), select, `FROM ${copy}`, `WHERE ${anchor}`, notYetIn('')].join('\n'),
    `DROP TABLE IF EXISTS ${copy} {on_cluster} SYNC`,
  ];
}

/** The statements of a whole rebuild migration, as the text below its header. */
export function tableRebuildText(rebuild: TableRebuild): string {
  return rebuild.tables
    .map((table) => {
      const head = `-- ${table.table}\n-- Rows a stopped earlier run left under the _${rebuild.suffix} name that the live table lacks (see above).\n`;
      return head + tableRebuildStatements(rebuild, table).map((statement) => `${statement};`).join('\n\n');
    })
    .join('\n\n')
    .concat('\n');
}
