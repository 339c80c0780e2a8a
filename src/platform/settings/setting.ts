/**
 * One environment variable as a typed setting: the kind of value it takes (which parses the text
 * and says in words what it accepts), its default, and the sentence the configuration reference
 * prints. A schema is a plain object of settings keyed by variable name; `readSettings` turns an
 * environment into an object of typed values, or refuses it naming every variable that is wrong.
 */

/** The values a variable may take. `parse` answers undefined for a text that is not one of them. */
export interface SettingKind<T> {
  /** What it accepts, as the start-up error and the reference say it: "a whole number from 0 to 65535". */
  readonly accepts: string;
  /** A shorter form for the reference's table where `accepts` spells out what is said once above it. */
  readonly brief?: string;
  parse(text: string): T | undefined;
  /** A value as the reference writes it. */
  show(value: T): string;
}

export interface Setting<T = unknown, D extends T | null = T | null> {
  readonly kind: SettingKind<T>;
  /** The value when the variable is unset or empty; null: none (the caller decides, `defaultText` says what). */
  readonly default: D;
  /** The reference's default where it is not one value (derived from another setting, the machine's cores). */
  readonly defaultText?: string;
  /** A credential or a URL that may hold one: a start-up error never repeats its value. */
  readonly secret?: boolean;
  /** The reference's sentence (Markdown; links relative to docs/). */
  readonly doc: string;
}

interface SettingOptions {
  defaultText?: string;
  secret?: boolean;
  doc: string;
}

/** A setting with a default: its value is never null. */
export function setting<T>(kind: SettingKind<T>, options: SettingOptions & { default: NoInfer<T> }): Setting<T, T>;
/** A setting without one: null when unset (`defaultText` says what the caller does then). */
export function setting<T>(kind: SettingKind<T>, options: SettingOptions): Setting<T, null>;
export function setting<T>(kind: SettingKind<T>, options: SettingOptions & { default?: T }): Setting<T> {
  return { kind, default: options.default ?? null, defaultText: options.defaultText, secret: options.secret, doc: options.doc };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema holds settings of every value type
export type SettingSchema = Record<string, Setting<any, any>>;

/** A setting's value: its kind's type, or null when it has no default and may stay unset. */
export type SettingValue<S> = S extends Setting<infer T, infer D> ? (D extends null ? T | null : T) : never;

export type SettingValues<S extends SettingSchema> = { [K in keyof S]: SettingValue<S[K]> };

/** A configuration that cannot start the service; the message names every variable at fault. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
  }
}

/** The message for one variable whose text its kind refuses. */
export function refusal(name: string, entry: Setting, raw: string): string {
  return `${name} must be ${entry.kind.accepts}${entry.secret ? '' : `, got ${JSON.stringify(raw)}`}`;
}

/**
 * Every setting of `schema` read from `env`. Unset and empty are the same (compose files and shells
 * write `NAME=` for "not set"); blanks around a value are ignored. All variables are read before any
 * error is thrown, so one start reports every mistake.
 */
export function readSettings<S extends SettingSchema>(schema: S, env: Readonly<Record<string, string | undefined>>): SettingValues<S> {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, entry] of Object.entries(schema)) {
    const raw = env[name] ?? '';
    const text = raw.trim();
    if (text === '') {
      values[name] = entry.default;
      continue;
    }
    const value: unknown = entry.kind.parse(text);
    if (value === undefined) problems.push(refusal(name, entry, raw));
    else values[name] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return values as SettingValues<S>;
}
