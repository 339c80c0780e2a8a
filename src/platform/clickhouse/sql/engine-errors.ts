/**
 * ClickHouse error codes Lookout acts on, in one place
 * (https://github.com/ClickHouse/ClickHouse/blob/master/src/Common/ErrorCodes.cpp). Both backends
 * report them: the server client as `code` (a string) and `type`, chdb through the same client.
 */
export const ENGINE_ERRORS = {
  TIMEOUT_EXCEEDED: '159',
  MEMORY_LIMIT_EXCEEDED: '241',
} as const;

export type EngineErrorName = keyof typeof ENGINE_ERRORS;

export function isEngineError(error: unknown, name: EngineErrorName): boolean {
  const e = error as { code?: unknown; type?: unknown } | null;
  return String(e?.code) === ENGINE_ERRORS[name] || e?.type === name;
}
