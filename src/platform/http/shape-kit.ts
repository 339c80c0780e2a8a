/**
 * Small TypeBox builders the resources' shape files share. Each yields the JSON Schema the OpenAPI
 * document carries (and ajv validates with) together with its TypeScript type. This file imports
 * nothing but TypeBox, so the dashboard's type check can read the shape files that use it.
 */
import { Type, type Static, type TObject, type TSchema } from 'typebox';

/**
 * `type: [T, 'null']` as one keyword (not an anyOf), so ajv's detail reads "must be string,null" and
 * the document stays as terse as JSON Schema allows; the type is the inner one or null.
 */
export const nullable = <S extends TSchema>(schema: S) => {
  const plain = schema as unknown as Record<string, unknown>;
  return Type.Unsafe<Static<S> | null>({ ...plain, type: [plain.type, 'null'] });
};

/** A closed list of strings as `{type: 'string', enum}`; a union of its literals as a type. */
export const stringEnum = <const V extends string[]>(values: readonly [...V], options: Record<string, unknown> = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/** A closed list of values as a bare `{enum}`; a union of its literals as a type. */
export const bareEnum = <const V extends string[]>(values: readonly [...V], options: Record<string, unknown> = {}) =>
  Type.Unsafe<V[number]>({ enum: [...values], ...options });

/** `{const: value}`, with the literal as its type. */
export const constant = <const V extends string>(value: V) => Type.Unsafe<V>({ const: value });

/** An object whose keys are free and whose values all have one schema (`additionalProperties`). */
export const mapOf = <S extends TSchema>(values: S, options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, Static<S>>>({ type: 'object', additionalProperties: values, ...options });

/** An object with exactly these keys, each of one schema, all required. */
export const keyed = <const K extends string, S extends TSchema>(keys: readonly K[], value: S) =>
  Type.Object(Object.fromEntries(keys.map((key) => [key, value]))) as unknown as TObject<Record<K, S>>;

/** A `$ref` to a component the routes register under `name`, typed as the schema it names. */
export const componentRef = <S extends TSchema>(name: string, _schema: S) => Type.Unsafe<Static<S>>({ $ref: `#/components/schemas/${name}` });

/** `{oneOf: [schema, {type: 'null'}]}`: an object or null. */
export const objectOrNull = <S extends TSchema>(schema: S) => Type.Unsafe<Static<S> | null>({ oneOf: [schema, { type: 'null' }] });

export const dateTime = Type.String({ format: 'date-time' });

/** `{type: 'object'}` with nothing said about its keys: free-form data such as attributes or metadata. */
export const anyObject = (options: Record<string, unknown> = {}) => Type.Unsafe<Record<string, unknown>>({ type: 'object', ...options });
