/**
 * Time as ClickHouse DateTime64(3) text in UTC, 'YYYY-MM-DD hh:mm:ss.sss': the one conversion every
 * row writer and query parameter uses, so a stored time and the bound that selects it agree to the
 * millisecond.
 */
export function dateTime64(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T08:00:00.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

export function msToDateTime64(ms: number): string {
  return dateTime64(new Date(ms));
}

/** Epoch nanoseconds (decimal string) → DateTime64(3) text, by string slicing so no precision is lost. */
export function nsToDateTime64(ns: string): string {
  const ms = ns.length > 6 ? Number(ns.slice(0, -6)) : 0;
  return msToDateTime64(ms);
}

/** ClickHouse DateTime64 text ('YYYY-MM-DD hh:mm:ss[.fff]', UTC) → ISO 8601, keeping its precision. */
export function isoFromDateTime64(text: string): string {
  return `${text.replace(' ', 'T')}Z`;
}
