/**
 * The OpenAPI 3.1 document, assembled from the routes as they register (route.ts). It is the single
 * source of the request schemas that ajv validates, and is served at /api/openapi.json.
 */
import type { TSchema } from 'typebox';
import { VERSION } from '../version.js';

export type JsonSchema = Record<string, unknown>;

/** A schema as modules declare it: plain JSON Schema, or a TypeBox schema (JSON Schema with a static type). */
export type DeclaredSchema = JsonSchema | TSchema;

export interface OpenApiOperation {
  summary: string;
  tags?: string[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: unknown[];
}

export class OpenApiDocument {
  private readonly paths: Record<string, Record<string, OpenApiOperation>> = {};
  readonly schemas: Record<string, JsonSchema> = {};

  addOperation(path: string, method: string, operation: OpenApiOperation): void {
    (this.paths[path] ??= {})[method.toLowerCase()] = operation;
  }

  /** Registers a named component schema and returns a $ref to it. */
  addSchema(name: string, schema: DeclaredSchema): JsonSchema {
    this.schemas[name] = schema as JsonSchema;
    return { $ref: `#/components/schemas/${name}` };
  }

  toJSON(): Record<string, unknown> {
    return {
      openapi: '3.1.0',
      info: {
        title: 'Lookout API',
        version: VERSION,
        description: 'Observability for AI agents: traces, analytics, and the workspace around them.',
      },
      servers: [{ url: '/api' }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        schemas: this.schemas,
      },
      security: [{ bearer: [] }],
      paths: this.paths,
    };
  }
}

export const errorResponse = {
  description: 'Error',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['detail'],
        properties: { detail: { type: 'string' }, code: { type: 'string' } },
      },
    },
  },
};
