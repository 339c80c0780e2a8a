/**
 * A column value of a JSON row read from ClickHouse as text: strings as they are, numbers and
 * booleans in their JSON spelling, null or absent as ''. An array or object (a Map or Tuple column)
 * is JSON text, never "[object Object]".
 */
export function rowText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
