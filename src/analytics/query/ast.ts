/**
 * The small SQL AST the analytics compiler builds and print.ts renders (the Kysely/HogQL shape:
 * frozen plain objects with a `kind` discriminant). Nothing here holds caller text in a position
 * where it could become SQL: caller values live only in `Value` nodes (printed as `{pN:Type}`
 * placeholders), columns and tables come from the catalog, aliases are the compiler's own
 * (`g0`, `m0`, `j0`, `k`), functions come from closed unions.
 */
import type { StoredId } from '../../platform/clickhouse/sql/event-ids.js';

/** ClickHouse types a bound parameter may have. */
export type ParamType = 'String' | 'Float64' | 'UInt32' | 'UUID' | 'UInt64' | "DateTime64(3, 'UTC')";

/** A caller value, always printed as a bound parameter. */
export interface ValueNode {
  readonly kind: 'Value';
  readonly type: ParamType;
  /** Numbers travel as their decimal text so both the HTTP client and chdb bind them exactly. */
  readonly value: string;
}

/** A constant written by the compiler itself (week mode, date format), never caller text. */
export interface LiteralNode {
  readonly kind: 'Literal';
  readonly value: number | typeof BUCKET_TEXT_FORMAT;
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

export type ScalarFn = 'toStartOfMinute' | 'toStartOfHour' | 'toDate' | 'toStartOfWeek' | 'toStartOfMonth' | 'formatDateTime' | 'arrayElementOrNull';

export interface CallNode {
  readonly kind: 'Call';
  readonly fn: ScalarFn;
  readonly args: readonly Expr[];
}

/** Aggregate functions the DSL can reach. The `OrNull` forms answer null, not 0, over no rows. */
export type AggregateFn = 'count' | 'uniqExact' | 'sum' | 'avgOrNull' | 'minOrNull' | 'maxOrNull' | 'quantileExactOrNull' | 'quantilesExactOrNull';

export interface AggregateNode {
  readonly kind: 'Aggregate';
  readonly fn: AggregateFn;
  /** quantileExact's level (0.5, 0.95, 0.99), or quantilesExact's levels: compiler constants. */
  readonly levels: readonly number[] | null;
  readonly arg: Expr | null;
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

export type Expr = ValueNode | LiteralNode | ColumnNode | IdTextNode | RefNode | CallNode | AggregateNode | CompareNode | InNode | NullCheckNode | AndNode;

export interface SelectItemNode {
  readonly kind: 'SelectItem';
  readonly expr: Expr;
  readonly alias: string;
}

/**
 * An event table. The printer qualifies it with the store's database, reads it with FINAL (so a
 * re-sent span or a re-processed trace counts once) and injects the tenant and project guard into
 * the WHERE of the select that reads it.
 */
export interface TableNode {
  readonly kind: 'Table';
  readonly table: string;
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
  readonly items: readonly SelectItemNode[];
  readonly from: TableNode | LeftJoinNode;
  readonly where: Expr | null;
  readonly groupBy: readonly RefNode[];
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
  freeze({ kind: 'Aggregate', fn, arg, condition, levels: levels && Object.freeze([...levels]) });
export const compare = (op: CompareOp, left: Expr, right: Expr): CompareNode => freeze({ kind: 'Compare', op, left, right });
export const inList = (expr: Expr, values: ValueNode[]): InNode => freeze({ kind: 'In', expr, values: Object.freeze(values) });
export const nullCheck = (expr: Expr, negated: boolean): NullCheckNode => freeze({ kind: 'NullCheck', expr, negated });
export const and = (items: Expr[]): AndNode => freeze({ kind: 'And', items: Object.freeze(items) });
export const selectItem = (expr: Expr, alias: string): SelectItemNode => freeze({ kind: 'SelectItem', expr, alias });
export const table = (name: string): TableNode => freeze({ kind: 'Table', table: name });
export const subquery = (query: SelectNode, alias: SubqueryNode['alias']): SubqueryNode => freeze({ kind: 'Subquery', query, alias });
export const leftJoin = (left: SubqueryNode, right: SubqueryNode, leftKey: RefNode, rightKey: RefNode): LeftJoinNode =>
  freeze({ kind: 'LeftJoin', left, right, leftKey, rightKey });
export const orderItem = (expr: RefNode, direction: OrderItemNode['direction']): OrderItemNode => freeze({ kind: 'OrderItem', expr, direction });
export const setting = (name: SettingName, v: number): SettingNode => freeze({ kind: 'Setting', name, value: v });
export const select = (parts: Omit<SelectNode, 'kind'>): SelectNode => freeze({ kind: 'Select', ...parts });
