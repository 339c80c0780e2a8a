/**
 * Turns ClickHouse JSON rows (keyed by the compiler's aliases) into response rows keyed by the
 * caller's aliases. Integer results (counts, uniqExact, sums and extremes of integer fields) are
 * asked for as quoted 64-bit values so nothing is rounded on the way; a value that fits a JavaScript
 * number exactly (|v| <= 2^53 - 1) is returned as a number, a larger one as a numeric string
 * (docs/analytics-query.md).
 */
import type { OutputColumn } from './build.js';
import { rowText } from '../../platform/clickhouse/row-text.js';

const INTEGER_TEXT = /^-?\d+$/;

export function integerValue(raw: unknown): number | string | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'number') return raw;
  const text = rowText(raw);
  if (!INTEGER_TEXT.test(text)) return Number(text);
  const big = BigInt(text);
  const safe = big <= BigInt(Number.MAX_SAFE_INTEGER) && big >= BigInt(Number.MIN_SAFE_INTEGER);
  return safe ? Number(big) : text;
}

function floatValue(raw: unknown): number | null {
  if (raw === null || raw === undefined) return null;
  const n = typeof raw === 'number' ? raw : Number(raw);
  return Number.isFinite(n) ? n : null;
}

export function shapeRow(raw: Record<string, unknown>, columns: readonly OutputColumn[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const column of columns) {
    const value = raw[column.key];
    switch (column.kind) {
      case 'integer':
        row[column.alias] = integerValue(value);
        break;
      case 'float':
        row[column.alias] = floatValue(value);
        break;
      case 'string':
        row[column.alias] = value === null || value === undefined ? null : rowText(value);
        break;
      default: {
        const never: never = column.kind;
        throw new Error(`unhandled output kind ${String(never)}`);
      }
    }
  }
  return row;
}
