/**
 * Time as ClickHouse DateTime64(3) text in UTC, 'YYYY-MM-DD hh:mm:ss.sss': the one conversion every
 * row writer and query parameter uses, so a stored time and the bound that selects it agree to the
 * millisecond.
 */
export function dateTime64(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T08:00:00.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

const DAY_MS = 86_400_000;
/** Year 10000: from there toISOString writes six-digit years. */
const LAST_MS = 253_402_300_800_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** The last day converted (ingestion converts every span's start: runs of spans share a day). */
let lastDay = NaN;
let lastDayText = '';

export function msToDateTime64(ms: number): string {
  // The day's text from toISOString once per day, the time of day by arithmetic: the same text,
  // at a fraction of toISOString per span (~1 µs, a few ms per 1000 spans with every conversion).
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_MS) return dateTime64(new Date(ms));
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  let rest = ms - day * DAY_MS;
  const milli = rest % 1000;
  rest = (rest - milli) / 1000;
  const second = rest % 60;
  rest = (rest - second) / 60;
  const minute = rest % 60;
  const hour = (rest - minute) / 60;
  return `${lastDayText} ${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${pad3(milli)}`;
}

/** Whole epoch milliseconds (floor of ns / 10^6) of validated nanosecond digits: the string cut, no BigInt (at most 14 digits, exact in a double). */
export function nsToMs(ns: string): number {
  return ns.length > 6 ? Number(ns.slice(0, -6)) : 0;
}

/** Epoch nanoseconds (decimal string) → DateTime64(3) text, by string slicing so no precision is lost. */
export function nsToDateTime64(ns: string): string {
  return msToDateTime64(nsToMs(ns));
}

/** ClickHouse DateTime64 text ('YYYY-MM-DD hh:mm:ss[.fff]', UTC) → ISO 8601, keeping its precision. */
export function isoFromDateTime64(text: string): string {
  return `${text.replace(' ', 'T')}Z`;
}
