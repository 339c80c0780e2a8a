/**
 * The one compiler of fragments (fragment.ts) into a statement. It names every value in order of
 * appearance (`p0`, `p1`, …; a value object used twice keeps one name) and binds it one of two ways:
 *  - `server`: `{pN:Type}` placeholders with the values sent beside the text (a ClickHouse server
 *    parses them itself);
 *  - `literal`: each value rendered by typedLiteral in place, for the embedded engine (typed-literal.ts says why).
 * Settings always go in the statement's own SETTINGS clause: per statement on both backends.
 *
 * A server reads each parameter as one field of the request's URL, and refuses a field longer than
 * `http_max_field_value_size` (128 KiB by default) or a URL past `http_max_uri_size` (1 MiB): a
 * settle round's trace ids or an ingest batch's span ids pass that easily. So under `server` binding
 * a value whose rendering exceeds SERVER_PARAM_MAX_BYTES, or that would take the statement's
 * parameters past SERVER_PARAMS_MAX_BYTES, goes into the statement's text as its typed literal (the
 * embedded engine's binding, same escaping) instead; the text has no such limit (the runner raises
 * the parser's max_query_size for a long statement).
 */
import type { Fragment, Param, Part } from './fragment.js';
import { clickhouseDateText, typedLiteral } from './typed-literal.js';

export type ParamBinding = 'server' | 'literal';

export interface CompiledStatement {
  sql: string;
  /** Values by name for `server` binding; empty for `literal`. */
  params: Record<string, unknown>;
}

export type StatementSettings = Readonly<Record<string, number | string>>;

const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;

/** The longest value sent as a server parameter: half the server's default field limit. */
export const SERVER_PARAM_MAX_BYTES = 64 * 1024;
/** All of a statement's server parameters together: half the server's default URL limit. */
export const SERVER_PARAMS_MAX_BYTES = 512 * 1024;

/** A value's rendered size, measured only for the values that can be long (strings and arrays). */
function renderedBytes(param: Param): number {
  const value = param.value;
  if (typeof value === 'string') return Buffer.byteLength(value) + 2;
  if (Array.isArray(value)) return Buffer.byteLength(typedLiteral(param.type, value));
  return 32;
}

/** `SETTINGS a = 1, b = 'x'`; names are code, checked all the same; string values are quoted. */
export function settingsClause(settings: StatementSettings): string {
  const items = Object.entries(settings).map(([name, value]) => {
    if (!SETTING_NAME.test(name)) throw new Error(`refusing the setting name ${JSON.stringify(name)}`);
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || value < 0) throw new Error(`refusing the setting ${name}=${value}`);
      return `${name} = ${value}`;
    }
    return `${name} = ${typedLiteral('String', value)}`;
  });
  return items.length > 0 ? `SETTINGS ${items.join(', ')}` : '';
}

export function compile(fragment: Fragment, binding: ParamBinding, settings: StatementSettings = {}): CompiledStatement {
  const names = new Map<Param, string>();
  const params: Record<string, unknown> = {};
  const out: string[] = [];
  let paramBytes = 0;
  const visit = (part: Part) => {
    if (typeof part === 'string') {
      out.push(part);
    } else if (part.kind === 'Fragment') {
      for (const inner of part.parts) visit(inner);
    } else if (binding === 'literal') {
      out.push(typedLiteral(part.type, part.value));
    } else {
      let name = names.get(part);
      if (name === undefined) {
        const bytes = renderedBytes(part);
        if (bytes > SERVER_PARAM_MAX_BYTES || paramBytes + bytes > SERVER_PARAMS_MAX_BYTES) {
          out.push(typedLiteral(part.type, part.value));
          return;
        }
        paramBytes += bytes;
        name = `p${names.size}`;
        names.set(part, name);
        // The driver would send a Date as whole seconds; the text keeps the milliseconds, as the literal does.
        params[name] = part.value instanceof Date ? clickhouseDateText(part.value) : part.value;
      }
      out.push(`{${name}:${part.type}}`);
    }
  };
  visit(fragment);
  const clause = settingsClause(settings);
  return { sql: clause ? `${out.join('')}\n${clause}` : out.join(''), params };
}
