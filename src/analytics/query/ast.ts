/**
 * The small SQL AST the analytics compiler builds and print.ts renders (the Kysely/HogQL shape:
 * frozen plain objects with a `kind` discriminant). Nothing here holds caller text in a position
 * where it could become SQL: caller values live only in `Value` nodes (printed as `{pN:Type}`
 * placeholders), columns and tables come from the catalog, aliases are the compiler's own
 * (`g0`, `m0`, `j0`, `k`) or the preset views' fixed column names, functions come from closed
 * unions. The preset views (src/analytics/views) build their statements from the same nodes, so
 * every table they read is printed with its tenant guard.
 */
import type { StoredId } from '../../platform/clickhouse/sql/event-ids.js';
import type { Fragment } from '../../platform/clickhouse/sql/fragment.js';

/** ClickHouse types a bound parameter may have. */
export type ParamType = 'String' | 'Float64' | 'UInt32' | 'UUID' | 'UInt64' | 'Date' | "DateTime64(3, 'UTC')";

/** A caller value, always printed as a bound parameter. */
export interface ValueNode {
  readonly kind: 'Value';
  readonly type: ParamType;
  /** Numbers travel as their decimal text so both the HTTP client and chdb bind them exactly. */
  readonly value: string;
}

/**
 * A constant written by the compiler itself (week mode, date format, the empty string a view
 * compares names with), never caller text.
 */
export interface LiteralNode {
  readonly kind: 'Literal';
  readonly value: number | typeof BUCKET_TEXT_FORMAT | '';
}

/** A column of the table in scope; the name is checked against the catalog before it gets here. */
export interface ColumnNode {
  readonly kind: 'Column';
  readonly column: string;
}

/**
 * The text of an id column stored as an id (catalog `stored`; clickhouse/009): printed as the SQL
 * layer's one form of it (event-ids.ts), so answers carry the same text as before.
 */
export interface IdTextNode {
  readonly kind: 'IdText';
  readonly column: string;
  readonly stored: StoredId;
}

/** A reference to an alias of the compiler's own (`g0`, `m1`, `k`), optionally qualified by a join side. */
export interface RefNode {
  readonly kind: 'Ref';
  readonly alias: string;
  readonly source: 'p' | 'j' | null;
}

export type ScalarFn =
  | 'toStartOfMinute'
  | 'toStartOfHour'
  | 'toDate'
  | 'toStartOfWeek'
  | 'toStartOfMonth'
  | 'formatDateTime'
  | 'arrayElementOrNull'
  // The preset views' functions: GROUPING SETS' grouping(), maps of runs per model, bucket positions.
  | 'grouping'
  | 'notEmpty'
  | 'length'
  | 'toUInt64'
  | 'toString'
  | 'mapFromArrays'
  | 'arrayWithConstant'
  | 'toRelativeDayNum'
  | 'toRelativeMonthNum'
  | 'intDiv';

export interface CallNode {
  readonly kind: 'Call';
  readonly fn: ScalarFn;
  readonly args: readonly Expr[];
}

/**
 * Aggregate functions the DSL can reach (the `OrNull` forms answer null, not 0, over no rows), and
 * those the preset views use besides (whose answers over no rows the views shape themselves).
 * The -Resample forms count into one array per group, indexed by their last argument.
 */
export type AggregateFn =
  | 'count'
  | 'uniqExact'
  | 'sum'
  | 'avgOrNull'
  | 'minOrNull'
  | 'maxOrNull'
  | 'quantileExactOrNull'
  | 'quantilesExactOrNull'
  | 'avg'
  | 'max'
  | 'quantilesExact'
  | 'groupUniqArray'
  | 'sumMap'
  | 'countResample'
  | 'sumResample';

export interface AggregateNode {
  readonly kind: 'Aggregate';
  readonly fn: AggregateFn;
  /**
   * The parameters of a parametric aggregate: quantileExact's level (0.5, 0.95, 0.99),
   * quantilesExact's levels, -Resample's (start, end, step). Compiler constants.
   */
  readonly levels: readonly number[] | null;
  readonly args: readonly Expr[];
  /** A measure's own filter, printed through the -If combinator (the measure alone sees it). */
  readonly condition: Expr | null;
}

export type CompareOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export interface CompareNode {
  readonly kind: 'Compare';
  readonly op: CompareOp;
  readonly left: Expr;
  readonly right: Expr;
}

/** `left - right`: the distance between two bucket numbers. */
export interface MinusNode {
  readonly kind: 'Minus';
  readonly left: Expr;
  readonly right: Expr;
}

export interface InNode {
  readonly kind: 'In';
  readonly expr: Expr;
  readonly values: readonly ValueNode[];
}

export interface NullCheckNode {
  readonly kind: 'NullCheck';
  readonly expr: Expr;
  readonly negated: boolean;
}

export interface AndNode {
  readonly kind: 'And';
  readonly items: readonly Expr[];
}

export type Expr = ValueNode | LiteralNode | ColumnNode | IdTextNode | RefNode | CallNode | AggregateNode | CompareNode | MinusNode | InNode | NullCheckNode | AndNode;

export interface SelectItemNode {
  readonly kind: 'SelectItem';
  readonly expr: Expr;
  readonly alias: string;
}

/**
 * An event table. The printer qualifies it with the store's database, reads it with FINAL (so a
 * re-sent span or a re-processed trace counts once) and injects the tenant and project guard into
 * the WHERE of the select that reads it. `final: false` reads every stored version of a row: only
 * for existence probes, which any version answers alike (and which stop at their first match).
 */
export interface TableNode {
  readonly kind: 'Table';
  readonly table: string;
  readonly final: boolean;
}

/**
 * Select-list columns another module writes as a fragment of the SQL layer (the cost module's
 * stored-cost aggregates, which its own statements use too). The printer refuses a fragment that
 * names a table or carries a guard: tables enter a statement only as TableNodes.
 */
export interface ForeignColumnsNode {
  readonly kind: 'ForeignColumns';
  readonly fragment: Fragment;
}

export interface SubqueryNode {
  readonly kind: 'Subquery';
  readonly query: SelectNode;
  readonly alias: 'p' | 'j';
}

export interface LeftJoinNode {
  readonly kind: 'LeftJoin';
  readonly left: SubqueryNode;
  readonly right: SubqueryNode;
  readonly leftKey: RefNode;
  readonly rightKey: RefNode;
}

export interface OrderItemNode {
  readonly kind: 'OrderItem';
  readonly expr: RefNode;
  readonly direction: 'ASC' | 'DESC';
}

/** Settings the compiler may attach; values are numbers from code and configuration. */
export type SettingName =
  | 'max_execution_time'
  | 'max_result_rows'
  | 'max_memory_usage'
  | 'join_use_nulls'
  | 'do_not_merge_across_partitions_select_final'
  | 'output_format_json_quote_64bit_integers'
  | 'output_format_json_quote_denormals'
  | 'readonly';

export interface SettingNode {
  readonly kind: 'Setting';
  readonly name: SettingName;
  readonly value: number;
}

export interface SelectNode {
  readonly kind: 'Select';
  /** `WITH <expr> AS <alias>`: an expression the items and aggregates name by its alias. */
  readonly with?: readonly SelectItemNode[];
  readonly items: readonly SelectItemNode[];
  /** Printed after the items. */
  readonly foreignColumns?: readonly ForeignColumnsNode[];
  readonly from: TableNode | LeftJoinNode;
  readonly where: Expr | null;
  readonly groupBy: readonly RefNode[];
  /**
   * `GROUP BY GROUPING SETS ((a), (b), ())` instead of groupBy: one scan answers each grouping,
   * its rows told apart by grouping() (1 where the column was aggregated away).
   */
  readonly groupingSets?: readonly (readonly RefNode[])[];
  readonly orderBy: readonly OrderItemNode[];
  readonly limit: ValueNode | null;
  readonly settings: readonly SettingNode[];
}

/** The text form of minute and hour buckets (date-time text, second precision, UTC). */
export const BUCKET_TEXT_FORMAT = '%Y-%m-%dT%H:%i:%SZ';

// Constructors: small, frozen, so a built tree cannot be edited behind the printer's back.
const freeze = <T extends object>(node: T): T => Object.freeze(node);

export const value = (type: ParamType, v: string): ValueNode => freeze({ kind: 'Value', type, value: v });
export const literal = (v: LiteralNode['value']): LiteralNode => freeze({ kind: 'Literal', value: v });
export const column = (name: string): ColumnNode => freeze({ kind: 'Column', column: name });
export const idText = (name: string, stored: StoredId): IdTextNode => freeze({ kind: 'IdText', column: name, stored });
export const ref = (alias: string, source: RefNode['source'] = null): RefNode => freeze({ kind: 'Ref', alias, source });
export const call = (fn: ScalarFn, ...args: Expr[]): CallNode => freeze({ kind: 'Call', fn, args: Object.freeze(args) });
export const aggregate = (fn: AggregateFn, arg: Expr | null, condition: Expr | null, levels: readonly number[] | null = null): AggregateNode =>
  aggregateOf(fn, arg ? [arg] : [], { condition, levels });
export const aggregateOf = (fn: AggregateFn, args: readonly Expr[], options: { condition?: Expr | null; levels?: readonly number[] | null } = {}): AggregateNode =>
  freeze({ kind: 'Aggregate', fn, args: Object.freeze([...args]), condition: options.condition ?? null, levels: options.levels ? Object.freeze([...options.levels]) : null });
export const minus = (left: Expr, right: Expr): MinusNode => freeze({ kind: 'Minus', left, right });
export const compare = (op: CompareOp, left: Expr, right: Expr): CompareNode => freeze({ kind: 'Compare', op, left, right });
export const inList = (expr: Expr, values: ValueNode[]): InNode => freeze({ kind: 'In', expr, values: Object.freeze(values) });
export const nullCheck = (expr: Expr, negated: boolean): NullCheckNode => freeze({ kind: 'NullCheck', expr, negated });
export const and = (items: Expr[]): AndNode => freeze({ kind: 'And', items: Object.freeze(items) });
export const selectItem = (expr: Expr, alias: string): SelectItemNode => freeze({ kind: 'SelectItem', expr, alias });
export const table = (name: string, options: { final?: boolean } = {}): TableNode => freeze({ kind: 'Table', table: name, final: options.final ?? true });
export const foreignColumns = (fragment: Fragment): ForeignColumnsNode => freeze({ kind: 'ForeignColumns', fragment });
export const subquery = (query: SelectNode, alias: SubqueryNode['alias']): SubqueryNode => freeze({ kind: 'Subquery', query, alias });
export const leftJoin = (left: SubqueryNode, right: SubqueryNode, leftKey: RefNode, rightKey: RefNode): LeftJoinNode =>
  freeze({ kind: 'LeftJoin', left, right, leftKey, rightKey });
export const orderItem = (expr: RefNode, direction: OrderItemNode['direction']): OrderItemNode => freeze({ kind: 'OrderItem', expr, direction });
export const setting = (name: SettingName, v: number): SettingNode => freeze({ kind: 'Setting', name, value: v });
export const select = (parts: Omit<SelectNode, 'kind'>): SelectNode => freeze({ kind: 'Select', ...parts });
