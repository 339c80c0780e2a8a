/**
 * The one printer of the analytics compiler: walks the AST of ast.ts and emits a fragment of the
 * ClickHouse SQL layer (src/platform/clickhouse/sql), every value a typed value the layer names and
 * binds (the Kysely query-compiler shape). Two guarantees live here:
 *  - identifiers are checked against a strict pattern before they are quoted (they come from the
 *    catalog or the compiler; the check is the last line of defence, HogQL's escaper),
 *  - every event table read is qualified, read with FINAL (trace.processed through the layer's
 *    processedTraces, its one read), and guarded by the layer's tenant and project guard (HogQL
 *    injects the team guard in its printer the same way) — a tree that forgets the guard cannot be
 *    printed without it, and the layer's runner counts guards against tables. Columns another
 *    module writes as a layer fragment are refused when they name a table or carry a guard.
 * The statement's settings are handed to the layer, which writes the SETTINGS clause.
 */
import type {
  AggregateNode,
  Expr,
  ForeignColumnsNode,
  LeftJoinNode,
  OrderItemNode,
  SelectItemNode,
  SelectNode,
  SettingNode,
  SubqueryNode,
  TableNode,
  ValueNode,
} from './ast.js';
import { BUCKET_TEXT_FORMAT } from './ast.js';
import type { StatementSettings } from '../../platform/clickhouse/sql/compile.js';
import { param, type Fragment, type Part } from '../../platform/clickhouse/sql/fragment.js';
import { storedIdText } from '../../platform/clickhouse/sql/event-ids.js';
import { processedTraces } from '../../platform/clickhouse/sql/processed-traces.js';
import { countGuards, scopedTable, tenantGuard } from '../../platform/clickhouse/sql/tenant-guard.js';

export interface PrintContext {
  tenantId: string;
  projectId: string;
  /** Qualifies a table name with the database (ClickHouseStore.table). */
  qualify(table: string): string;
}

export interface PrintedQuery {
  statement: Fragment;
  settings: StatementSettings;
}

/** Marks where an embedded value or fragment goes in the printed text; NUL never occurs in code-written SQL. */
const SLOT = /\u0000(\d+)\u0000/g;

/** trace.processed's table (catalog.ts), read through processedTraces. */
const PROCESSED_TRACES = 'event_trace_processed';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Quotes an identifier that already passed the allowlist; anything else is a compiler bug, not caller input. */
export function quoteIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`refusing to print identifier ${JSON.stringify(name)}`);
  return `\`${name}\``;
}

function assertNever(node: never): never {
  throw new Error(`unhandled AST node ${JSON.stringify(node)}`);
}

export class Printer {
  /** Values and layer fragments embedded in the text, by slot number. */
  private readonly embedded: (Fragment | ReturnType<typeof param>)[] = [];

  constructor(private readonly context: PrintContext) {}

  /** Prints a whole query; its top-level settings go to the layer's SETTINGS clause. */
  static query(node: SelectNode, context: PrintContext): PrintedQuery {
    const printer = new Printer(context);
    const text = printer.select(node, false);
    const settings: Record<string, number> = {};
    for (const s of node.settings) settings[s.name] = printer.settingValue(s);
    return { statement: printer.fragment(text), settings };
  }

  /**
   * Prints only the WHERE condition of a select that reads a table — guard, then the tree's own
   * condition — with its own parameters. The cost module runs its own query over the same rows.
   */
  static where(node: SelectNode, context: PrintContext): Fragment {
    if (node.from.kind !== 'Table') throw new Error('Printer.where needs a select that reads a table');
    const printer = new Printer(context);
    return printer.fragment(printer.guardedWhere(node.where));
  }

  /** Prints one expression on its own (used to hand group expressions to the cost module), with its values. */
  static expression(node: Expr, context: PrintContext): Fragment {
    const printer = new Printer(context);
    return printer.fragment(printer.expr(node));
  }

  /** Puts a value or fragment in the text as a slot; fragment() replaces slots with them. */
  private embed(item: Fragment | ReturnType<typeof param>): string {
    this.embedded.push(item);
    return `\u0000${this.embedded.length - 1}\u0000`;
  }

  private fragment(text: string): Fragment {
    const parts: Part[] = [];
    let last = 0;
    for (const match of text.matchAll(SLOT)) {
      if (match.index > last) parts.push(text.slice(last, match.index));
      parts.push(this.embedded[Number(match[1])]);
      last = match.index + match[0].length;
    }
    if (last < text.length) parts.push(text.slice(last));
    return Object.freeze({ kind: 'Fragment', parts: Object.freeze(parts) });
  }

  private param(node: ValueNode): string {
    return this.embed(param(node.type, node.value));
  }

  /** The tenant and project guard of the SQL layer, before the tree's own condition. */
  private guard(): string {
    return this.embed(tenantGuard({ tenantId: this.context.tenantId, projectId: this.context.projectId }));
  }

  private guardedWhere(where: Expr | null, guard = this.guard()): string {
    return where ? `${guard} AND ${this.expr(where)}` : guard;
  }

  private select(node: SelectNode, withSettings = true): string {
    const guard = node.from.kind === 'Table' ? this.guard() : null;
    const parts: string[] = [];
    if (node.with && node.with.length > 0) parts.push(`WITH ${node.with.map((item) => this.selectItem(item)).join(', ')}`);
    const columns = [...node.items.map((item) => this.selectItem(item)), ...(node.foreignColumns ?? []).map((f) => this.foreignColumns(f))];
    parts.push(`SELECT ${columns.join(', ')}`);
    if (node.from.kind === 'Table' && node.from.table === PROCESSED_TRACES && node.from.final && guard !== null) {
      // trace.processed: the SQL layer's one read of it, which applies the guarded condition itself.
      const where = this.fragment(this.guardedWhere(node.where, guard));
      parts.push(`FROM ${this.embed(processedTraces(this.context.qualify(PROCESSED_TRACES), where))}`);
    } else {
      parts.push(`FROM ${this.from(node.from)}`);
      if (guard !== null) parts.push(`WHERE ${this.guardedWhere(node.where, guard)}`);
      else if (node.where) parts.push(`WHERE ${this.expr(node.where)}`);
    }
    if (node.groupingSets && node.groupBy.length > 0) throw new Error('a select groups by GROUPING SETS or by columns, not both');
    if (node.groupingSets) {
      parts.push(`GROUP BY GROUPING SETS (${node.groupingSets.map((set) => `(${set.map((g) => this.expr(g)).join(', ')})`).join(', ')})`);
    }
    if (node.groupBy.length > 0) parts.push(`GROUP BY ${node.groupBy.map((g) => this.expr(g)).join(', ')}`);
    if (node.orderBy.length > 0) parts.push(`ORDER BY ${node.orderBy.map((o) => this.orderItem(o)).join(', ')}`);
    if (node.limit) parts.push(`LIMIT ${this.param(node.limit)}`);
    if (withSettings && node.settings.length > 0) parts.push(`SETTINGS ${node.settings.map((s) => `${s.name} = ${this.settingValue(s)}`).join(', ')}`);
    return parts.join('\n');
  }

  private selectItem(node: SelectItemNode): string {
    return `${this.expr(node.expr)} AS ${quoteIdentifier(node.alias)}`;
  }

  /** Another module's columns: a layer fragment, which may bring values but never a table or a guard. */
  private foreignColumns(node: ForeignColumnsNode): string {
    const counts = countGuards(node.fragment, this.context.tenantId);
    if (counts.tables + counts.guards + counts.foreignGuards > 0) throw new Error('refusing foreign columns that name a table or carry a guard');
    return this.embed(node.fragment);
  }

  private from(node: TableNode | LeftJoinNode): string {
    switch (node.kind) {
      case 'Table': {
        quoteIdentifier(node.table); // allowlist check; the store quotes and qualifies
        const read = this.embed(scopedTable(this.context.qualify(node.table)));
        return node.final ? `${read} FINAL` : read;
      }
      case 'LeftJoin':
        return `${this.subquery(node.left)}\nLEFT JOIN ${this.subquery(node.right)} ON ${this.expr(node.leftKey)} = ${this.expr(node.rightKey)}`;
      default:
        return assertNever(node);
    }
  }

  private subquery(node: SubqueryNode): string {
    const inner = this.select(node.query).replaceAll('\n', '\n  ');
    return `(\n  ${inner}\n) AS ${quoteIdentifier(node.alias)}`;
  }

  private orderItem(node: OrderItemNode): string {
    return `${this.expr(node.expr)} ${node.direction}`;
  }

  private settingValue(node: SettingNode): number {
    if (!Number.isFinite(node.value) || node.value < 0) throw new Error(`refusing to print setting ${node.name}=${node.value}`);
    return node.value;
  }

  private aggregate(node: AggregateNode): string {
    const level = node.levels === null ? '' : `(${node.levels.map((l) => this.number(l)).join(', ')})`;
    const args = node.args.map((a) => this.expr(a));
    if (node.condition) args.push(this.expr(node.condition));
    // The -If combinator goes last: `quantileExactOrNullIf(0.95)(x, cond)`; count's is countIf(cond).
    const name = node.condition ? `${node.fn}If` : node.fn;
    return `${name}${level}(${args.join(', ')})`;
  }

  private number(value: number): string {
    if (!Number.isFinite(value)) throw new Error(`refusing to print literal ${value}`);
    return String(value);
  }

  /** An operand of `-`: a comparison, list, conjunction or another difference goes in parentheses. */
  private operand(node: Expr): string {
    const text = this.expr(node);
    return node.kind === 'Minus' || node.kind === 'Compare' || node.kind === 'In' || node.kind === 'And' ? `(${text})` : text;
  }

  expr(node: Expr): string {
    switch (node.kind) {
      case 'Value':
        return this.param(node);
      case 'Literal':
        if (typeof node.value === 'number') return this.number(node.value);
        // The only string literals are the compiler's bucket format and the empty string; neither has a quote or backslash.
        if (node.value !== BUCKET_TEXT_FORMAT && node.value !== '') throw new Error('refusing to print an unknown string literal');
        return `'${node.value}'`;
      case 'Column':
        return quoteIdentifier(node.column);
      case 'IdText':
        return storedIdText(node.stored, quoteIdentifier(node.column));
      case 'Ref':
        return node.source ? `${quoteIdentifier(node.source)}.${quoteIdentifier(node.alias)}` : quoteIdentifier(node.alias);
      case 'Call':
        return `${node.fn}(${node.args.map((a) => this.expr(a)).join(', ')})`;
      case 'Aggregate':
        return this.aggregate(node);
      case 'Compare':
        return `${this.expr(node.left)} ${node.op} ${this.expr(node.right)}`;
      case 'Minus':
        return `${this.operand(node.left)} - ${this.operand(node.right)}`;
      case 'In':
        return `${this.expr(node.expr)} IN (${node.values.map((v) => this.param(v)).join(', ')})`;
      case 'NullCheck':
        return `${node.negated ? 'isNotNull' : 'isNull'}(${this.expr(node.expr)})`;
      case 'And':
        // The DSL has no OR, and every item binds tighter than AND, so no parentheses are needed.
        return node.items.map((i) => this.expr(i)).join(' AND ');
      default:
        return assertNever(node);
    }
  }
}
