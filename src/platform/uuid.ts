/** A UUID in text form, lower-case letters; matched case-insensitively (here and by PostgreSQL's `~*`). */
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const UUID = new RegExp(UUID_PATTERN, 'i');

/**
 * Whether a value is a UUID in text form. Ids from a path or a query are checked before they reach
 * a PostgreSQL `uuid` column, where a malformed id would be a 500 instead of a plain "not found".
 */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
