/**
 * Who did something and through which surface: stamped on every analytics event
 * (every event carries these; missing = ''). One type for span events written at ingest,
 * issue lifecycle events from routes and MCP tools, and the work the service does on its own.
 * Plain strings, because an origin also comes back from storage (the settle queue keeps the sender's).
 */
export interface Origin {
  /** 'sdk' | 'user' | 'api_key' | 'system' */
  actor: string;
  /** 'otlp' | 'api' | 'mcp' | 'system' */
  surface: string;
  user_id: string;
  api_key_id: string;
}

/** Settling and issue extraction work on behalf of nobody: their events say so (actor/surface `system`). */
export const SYSTEM_ORIGIN: Origin = { actor: 'system', surface: 'system', user_id: '', api_key_id: '' };
