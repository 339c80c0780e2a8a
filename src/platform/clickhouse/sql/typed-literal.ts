import { dateTime64 } from '../clickhouse-time.js';

/**
 * The one audited place where a value becomes SQL text (chdb's Node binding runs every
 * statement that has query parameters through one process-wide chain, so on the embedded engine
 * Lookout binds values as literals and its statements run concurrently; a ClickHouse server keeps
 * server-side `{name:Type}` parameters).
 *
 * Every literal has the form the server gives a parameter: the value's text, parsed as its declared
 * type — `CAST('<text>' AS Type)`. The text is escaped per ClickHouse's quoted-string rules
 * (https://clickhouse.com/docs/sql-reference/syntax#string): backslash and quote are escaped with a
 * backslash, and every control character (NUL, newline, …) as an escape sequence, so no value can
 * end the literal, and the SQL text never holds a raw control byte (chdb passes it as a C string).
 * Arrays and Nullable are built from their element literals; integers are checked digit strings
 * (64-bit values stay exact as strings); floats are finite numbers or ClickHouse's inf/nan words.
 */

const CONTROL = /[\u0000-\u001f\u007f]/g;

/** A ClickHouse quoted string literal: the only function that puts a value's text in quotes. */
export function quoteString(text: string): string {
  const escaped = text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(CONTROL, (c) => {
    switch (c) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      case '\0':
        return '\\0';
      default:
        return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
    }
  });
  return `'${escaped}'`;
}

/** Splits `Array(Nullable(String))` into its head and argument text. */
function parseType(type: string): { head: string; inner: string | null } {
  const open = type.indexOf('(');
  if (open < 0) return { head: type.trim(), inner: null };
  if (!type.endsWith(')')) throw new Error(`malformed ClickHouse type ${type}`);
  return { head: type.slice(0, open).trim(), inner: type.slice(open + 1, -1) };
}

const INTEGER_TYPE = /^U?Int(8|16|32|64|128|256)$/;
const FLOAT_TYPE = /^(Float32|Float64|BFloat16)$/;
const DECIMAL_TYPE = /^Decimal(32|64|128|256)?$/;
const INTEGER = /^[-+]?\d+$/;
const FLOAT = /^([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(inf|nan))$/i;
const DATE_TEXT = /^[0-9: .T-]+Z?$/;

/** 'YYYY-MM-DD hh:mm:ss.sss' in UTC: the text ClickHouse parses for Date and DateTime64 types. */
export function clickhouseDateText(value: Date): string {
  if (Number.isNaN(value.getTime())) throw new Error('refusing an invalid Date');
  return dateTime64(value);
}

function scalarText(head: string, value: unknown): string {
  if (INTEGER_TYPE.test(head)) {
    const text = typeof value === 'bigint' ? value.toString() : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
    if (typeof text !== 'string' || !INTEGER.test(text)) throw new Error(`${head} needs an integer, got ${JSON.stringify(String(value))}`);
    return text;
  }
  if (FLOAT_TYPE.test(head) || DECIMAL_TYPE.test(head)) {
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !FLOAT.test(text)) throw new Error(`${head} needs a number, got ${JSON.stringify(String(value))}`);
    return text;
  }
  if (head === 'Bool') {
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    if (value === 0 || value === 1) return value ? 'true' : 'false';
    throw new Error('Bool needs a boolean');
  }
  if (head === 'Date' || head === 'Date32' || head === 'DateTime' || head === 'DateTime64') {
    if (value instanceof Date) return clickhouseDateText(value);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value !== 'string' || !DATE_TEXT.test(value)) throw new Error(`${head} needs a date, got ${JSON.stringify(String(value))}`);
    return value;
  }
  if (head === 'String' || head === 'FixedString' || head === 'UUID' || head === 'LowCardinality' || head === 'IPv4' || head === 'IPv6') {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'bigint') return String(value);
    throw new Error(`${head} needs a string, got ${typeof value}`);
  }
  throw new Error(`no literal rule for the ClickHouse type ${head}`);
}

/**
 * A value as a typed SQL literal, equal to what the server binds for `{p:Type}` with that value.
 * Throws on a value the type cannot hold (the server would answer a parse error for it too).
 */
export function typedLiteral(type: string, value: unknown): string {
  const { head, inner } = parseType(type);
  if (head === 'Nullable') {
    if (inner === null) throw new Error('Nullable needs a type');
    if (value === null || value === undefined) return `CAST(NULL AS ${type})`;
    return `CAST(${typedLiteral(inner, value)} AS ${type})`;
  }
  if (head === 'Array') {
    if (inner === null) throw new Error('Array needs a type');
    if (!Array.isArray(value)) throw new Error(`${type} needs an array`);
    return `CAST([${value.map((item) => typedLiteral(inner, item)).join(', ')}] AS ${type})`;
  }
  if (value === null || value === undefined) throw new Error(`${type} is not Nullable; got ${String(value)}`);
  if (head === 'String' && inner === null) return quoteString(scalarText(head, value));
  return `CAST(${quoteString(scalarText(head, value))} AS ${type})`;
}
