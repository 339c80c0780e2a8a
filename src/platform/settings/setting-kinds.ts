/**
 * The kinds of value an environment variable takes. Each parses strictly (a port is digits, not
 * "8e3"; a switch is one of eight words) and says in words what it accepts, so the start-up error
 * and the configuration reference state the same bounds.
 */
import type { SettingKind } from './setting.js';

const DIGITS = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

function range(min: number, max: number | undefined): string {
  if (max !== undefined) return ` from ${min} to ${max}`;
  return min > 0 ? `, at least ${min}` : '';
}

/** A whole number within [min, max]; `unit` names what it counts ("milliseconds"). */
export function integer(bounds: { min?: number; max?: number; unit?: string } = {}): SettingKind<number> {
  const min = bounds.min ?? 0;
  return {
    accepts: `a whole number${bounds.unit ? ` of ${bounds.unit}` : ''}${range(min, bounds.max)}`,
    parse(text) {
      if (!DIGITS.test(text)) return undefined;
      const value = Number(text);
      return value >= min && (bounds.max === undefined || value <= bounds.max) && Number.isSafeInteger(value) ? value : undefined;
    },
    show: String,
  };
}

/** A decimal number of at least `min` (fractions allowed: "1.5" hours, "0.001" seconds). */
export function decimal(bounds: { min?: number; unit?: string } = {}): SettingKind<number> {
  const min = bounds.min ?? 0;
  return {
    accepts: `a number${bounds.unit ? ` of ${bounds.unit}` : ''}${range(min, undefined)}`,
    parse(text) {
      if (!DECIMAL.test(text)) return undefined;
      const value = Number(text);
      return value >= min ? value : undefined;
    },
    show: String,
  };
}

/** The words a switch accepts, in any case: one spelling set for every on/off variable. */
export const ON_WORDS = ['on', 'true', 'yes', '1'] as const;
export const OFF_WORDS = ['off', 'false', 'no', '0'] as const;

export const onOff: SettingKind<boolean> = {
  accepts: `on or off (${ON_WORDS.map((word, i) => `${word}/${OFF_WORDS[i]}`).join(', ')}, any case)`,
  brief: 'on or off',
  parse(text) {
    const word = text.toLowerCase();
    if ((ON_WORDS as readonly string[]).includes(word)) return true;
    if ((OFF_WORDS as readonly string[]).includes(word)) return false;
    return undefined;
  },
  show: (value) => (value ? 'on' : 'off'),
};

/** One of a closed list of words, exactly as written there. */
export function choice<const V extends string>(values: readonly V[]): SettingKind<V> {
  return {
    accepts: `one of ${values.join(', ')}`,
    parse: (text) => (values as readonly string[]).includes(text) ? (text as V) : undefined,
    show: String,
  };
}

/** A comma-separated list of at least one item of `item` (blanks around items ignored). */
export function list<T>(item: SettingKind<T>, items: string): SettingKind<T[]> {
  return {
    accepts: `a comma-separated list of ${items}`,
    parse(text) {
      const parsed = text.split(',').map((part) => part.trim()).filter(Boolean).map((part) => item.parse(part));
      return parsed.length > 0 && parsed.every((value) => value !== undefined) ? parsed : undefined;
    },
    show: (values) => values.map((value) => item.show(value)).join(','),
  };
}

/** Any text. */
export const text: SettingKind<string> = { accepts: 'any text', parse: (value) => value, show: String };

/** A text that matches `shape`, described as `accepts` (and `brief` in the reference's table). */
export function matching(shape: RegExp, accepts: string, brief?: string): SettingKind<string> {
  return { accepts, brief, parse: (value) => (shape.test(value) ? value : undefined), show: String };
}

export const IDENTIFIER_RULE = 'letters, digits and underscores, not starting with a digit';

/** A ClickHouse name spliced into statements (database, cluster, workload): a plain identifier only. */
export const identifier = matching(/^[A-Za-z_][A-Za-z0-9_]*$/, `a plain identifier (${IDENTIFIER_RULE})`, 'plain identifier');

/** An absolute URL with one of `protocols` (e.g. `['http:', 'https:']`); the text is kept as written. */
export function url(protocols: readonly string[], accepts: string): SettingKind<string> {
  return {
    accepts,
    parse(value) {
      try {
        return protocols.includes(new URL(value).protocol) ? value : undefined;
      } catch {
        return undefined;
      }
    },
    show: String,
  };
}

export const httpUrl = url(['http:', 'https:'], 'an http(s) URL');
