/**
 * One source per shape: every schema of the OpenAPI document (components, request bodies, query
 * parameters, answers) is a TypeBox schema declared in a shape file, the very object the route's
 * ajv validator and the service's types come from; no route writes JSON Schema by hand. And the
 * shape files stay readable by the dashboard's type check, which imports their types: they import
 * nothing of the server but other shape files.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../helpers/openapi-document.js';

const srcRoot = path.resolve(import.meta.dirname, '..', '..', '..', 'src');

/**
 * TypeBox marks each schema it builds with a non-enumerable `~kind` (`~unsafe` for one it takes as
 * given, such as `{type: [T, 'null']}`); a hand-written literal has neither.
 */
const isTypeBox = (schema: unknown) =>
  typeof schema === 'object' && schema !== null && ['~kind', '~unsafe'].some((mark) => Object.getOwnPropertyDescriptor(schema, mark) !== undefined);

interface Operation {
  parameters?: { name: string; in: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

/** Every schema the document names, as `where → schema` (path parameters excepted: they are plain `{type: 'string'}` by definition). */
function documentSchemas(): Map<string, unknown> {
  const openapi = buildOpenApiDocument();
  const found = new Map<string, unknown>();
  for (const [name, schema] of Object.entries(openapi.schemas)) found.set(`components.schemas.${name}`, schema);
  const paths = (openapi.toJSON().paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [route, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const at = `${method.toUpperCase()} ${route}`;
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'query') found.set(`${at} ?${parameter.name}`, parameter.schema);
      for (const [type, body] of Object.entries(operation.requestBody?.content ?? {})) found.set(`${at} body ${type}`, body.schema);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === '4XX') continue; // the shared error answer (platform/http/openapi.ts)
        for (const [type, body] of Object.entries(response.content ?? {})) found.set(`${at} ${status} ${type}`, body.schema);
      }
    }
  }
  return found;
}

/** A `$ref` to a component is a pointer, not a shape: the component itself is checked. */
const isComponentRef = (schema: unknown) =>
  typeof schema === 'object' && schema !== null && Object.keys(schema).length === 1 && typeof (schema as { $ref?: unknown }).$ref === 'string';

function shapeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return shapeFiles(full);
    return /-(schemas|shapes)\.ts$/.test(entry.name) || entry.name === 'shape-kit.ts' ? [full] : [];
  });
}

describe('the OpenAPI document', () => {
  it('is assembled from TypeBox schemas only: every component, body, query parameter and answer', () => {
    const schemas = documentSchemas();
    expect(schemas.size).toBeGreaterThan(100);
    const handWritten = [...schemas].filter(([, schema]) => !isTypeBox(schema) && !isComponentRef(schema)).map(([where]) => where);
    expect(handWritten).toEqual([]);
  });

  it('refers only to components it registers', () => {
    const openapi = buildOpenApiDocument();
    const refs = JSON.stringify(openapi.toJSON()).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    const missing = [...new Set(refs)].map((ref) => ref.split('/').pop()!).filter((name) => !(name in openapi.schemas));
    expect(missing).toEqual([]);
  });

  it('tells a hand-written schema from a TypeBox one (the check above can fail)', () => {
    expect(isTypeBox({ type: 'object', properties: {} })).toBe(false);
    expect(isTypeBox(Type.Object({}))).toBe(true);
    expect(isTypeBox(Type.Unsafe({ type: ['string', 'null'] }))).toBe(true);
    expect(isComponentRef({ $ref: '#/components/schemas/Issue' })).toBe(true);
  });
});

describe('the shape files', () => {
  it('import nothing of the server but other shape files and TypeBox, so the dashboard can import their types', () => {
    const files = shapeFiles(srcRoot);
    expect(files.length).toBeGreaterThan(10);
    const offences: string[] = [];
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, false);
      for (const { fileName } of importedFiles) {
        const allowed = fileName === 'typebox' || /-(schemas|shapes)\.js$/.test(fileName) || fileName.endsWith('/shape-kit.js') || fileName.endsWith('/catalog.js');
        if (!allowed) offences.push(`${path.relative(srcRoot, file)} imports ${fileName}`);
      }
    }
    expect(offences).toEqual([]);
  });
});
