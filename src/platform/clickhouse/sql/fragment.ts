/**
 * SQL fragments for ClickHouse, Kysely's raw-SQL node shape: a fragment is trusted SQL text (written
 * in this repository, never a caller's string) interleaved with typed values and nested fragments.
 * A value stays a value until the one compiler (compile.ts) names it, so fragments built apart
 * combine freely: nobody picks parameter names, and two fragments can never bind the same name.
 */

/** One value with its ClickHouse type, e.g. `String`, `DateTime64(3, 'UTC')`, `Array(String)`. */
export interface Param {
  readonly kind: 'Param';
  readonly type: string;
  readonly value: unknown;
}

export type Part = string | Param | Fragment;

export interface Fragment {
  readonly kind: 'Fragment';
  readonly parts: readonly Part[];
}

/** What a fragment may interpolate: another fragment or a typed value (plain text must go through `raw`). */
export type SqlValue = Param | Fragment;

const TYPE = /^[A-Za-z][A-Za-z0-9]*(\([A-Za-z0-9_(), ']*\))?$/;

/** Parentheses close in order and only at the end: `Array(String)`, never `Array(String)) OR (1`. */
function balanced(type: string): boolean {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    if (type[i] === '(') depth++;
    else if (type[i] === ')' && --depth === 0 && i !== type.length - 1) return false;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** A typed value. The type is code, never caller input; it is checked for shape all the same. */
export function param(type: string, value: unknown): Param {
  if (!TYPE.test(type) || !balanced(type)) throw new Error(`refusing the ClickHouse type ${JSON.stringify(type)}`);
  return Object.freeze({ kind: 'Param', type, value });
}

/** SQL text from code (a table name from ClickHouseStore.table, an allowlisted column, a constant). */
export function raw(text: string): Fragment {
  return Object.freeze({ kind: 'Fragment', parts: Object.freeze([text]) });
}

/** The tagged template: `sql\`SELECT … WHERE x = ${param('String', v)}\``. */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): Fragment {
  const parts: Part[] = [];
  strings.forEach((text, i) => {
    if (text) parts.push(text);
    if (i < values.length) {
      const value = values[i];
      if (!value || (value.kind !== 'Param' && value.kind !== 'Fragment')) {
        throw new Error('sql`…` interpolates only param(…) values and fragments; wrap code text in raw(…)');
      }
      parts.push(value);
    }
  });
  return Object.freeze({ kind: 'Fragment', parts: Object.freeze(parts) });
}

/** Fragments separated by `separator` (code text), e.g. a column list or an AND chain. */
export function join(items: readonly SqlValue[], separator = ', '): Fragment {
  const parts: Part[] = [];
  items.forEach((item, i) => {
    if (i > 0) parts.push(separator);
    parts.push(item);
  });
  return Object.freeze({ kind: 'Fragment', parts: Object.freeze(parts) });
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/**
 * Lifts SQL text written with ClickHouse's own `{name:Type}` placeholders into a fragment. The
 * names are local to this text: each becomes a value the compiler renames, so the same name in two
 * lifted texts never collides. Every placeholder needs a value; values no placeholder uses are
 * ignored (as ClickHouse ignores unused query parameters), so a shared value map can serve many texts.
 */
export function fromText(text: string, values: Record<string, unknown> = {}): Fragment {
  const parts: Part[] = [];
  const made = new Map<string, Param>();
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const [whole, name, type] = match;
    if (!(name in values)) throw new Error(`no value for the placeholder {${name}:${type}}`);
    let value = made.get(name);
    if (!value) made.set(name, (value = param(type, values[name])));
    else if (value.type !== type) throw new Error(`placeholder ${name} used with two types`);
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(value);
    last = match.index + whole.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return Object.freeze({ kind: 'Fragment', parts: Object.freeze(parts) });
}
