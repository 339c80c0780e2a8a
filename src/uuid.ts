const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a value is a UUID in text form. Ids from a path or a query are checked before they reach
 * a PostgreSQL `uuid` column, where a malformed id would be a 500 instead of a plain "not found".
 */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
