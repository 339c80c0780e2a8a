import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from './errors.js';
import type { JsonSchema } from './openapi.js';

// ajv-formats is a CommonJS module whose default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({ allErrors: false, coerceTypes, strict: false, useDefaults: true });
  addFormats(ajv);
  return ajv;
}

/** Bodies are validated exactly as sent; query strings are coerced (`?limit=5` is a number). */
const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

export function compileBodySchema(schema: JsonSchema, components: Record<string, JsonSchema>): ValidateFunction {
  return bodyAjv.compile(withComponents(schema, components));
}

export function compileQuerySchema(schema: JsonSchema): ValidateFunction {
  return queryAjv.compile(schema);
}

/** $refs in route schemas point into the OpenAPI components; ajv resolves them from an inlined copy. */
function withComponents(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  return { ...schema, components: { schemas: components } };
}

function fieldPath(where: string, error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
  return path || where;
}

/** One readable detail naming the offending field, e.g. "name: must be string". */
export function describeValidationError(where: 'body' | 'query', errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (!error) return `Invalid ${where}`;
  const field = fieldPath(where, error);
  switch (error.keyword) {
    case 'additionalProperties':
      return `${field === where ? where : field}: unknown key '${(error.params as { additionalProperty: string }).additionalProperty}'`;
    case 'required':
      return `${field === where ? '' : `${field}.`}${(error.params as { missingProperty: string }).missingProperty} is required`;
    case 'enum':
      return `${field}: must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String).join(', ')}`;
    default:
      return `${field}: ${error.message ?? 'is invalid'}`;
  }
}

export function assertValid(validate: ValidateFunction, value: unknown, where: 'body' | 'query'): void {
  if (!validate(value)) throw new ValidationError(describeValidationError(where, validate.errors));
}

/** A NUL character or an unpaired UTF-16 surrogate: valid in JSON, but PostgreSQL text and jsonb refuse them. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Refuses strings the stores cannot keep, naming the field (the detail names the field),
 * so they are a 400 here instead of a PostgreSQL error (a 500) after part of the work ran.
 */
export function assertStorableStrings(value: unknown, where: 'body' | 'query'): void {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value === 'string') {
      if (UNSTORABLE.test(item.value)) throw new ValidationError(`${item.path || where}: must not contain NUL characters or unpaired surrogates`);
    } else if (Array.isArray(item.value)) {
      item.value.forEach((v, i) => stack.push({ value: v, path: item.path ? `${item.path}.${i}` : String(i) }));
    } else if (typeof item.value === 'object' && item.value !== null) {
      for (const [k, v] of Object.entries(item.value)) {
        if (UNSTORABLE.test(k)) throw new ValidationError(`${where}: keys must not contain NUL characters or unpaired surrogates`);
        stack.push({ value: v, path: item.path ? `${item.path}.${k}` : k });
      }
    }
  }
}
