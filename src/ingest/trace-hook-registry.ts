import type { AppDeps } from '../app/app-deps.js';
import type { TraceHooks } from './trace-hooks.js';

declare module '../app/app-deps.js' {
  interface ServiceRegistry {
    /** Listeners to processed traces, shared by ingestion (which calls them) and the modules that add them. */
    traceHooks?: TraceHooks;
  }
}

/**
 * The one TraceHooks of a process, in deps.services. Apart from trace-hooks.ts because that file's
 * types reach the compute workers (settle-summaries.ts), and app-deps imports the compute pool:
 * keeping this accessor there closed a circle app-deps → compute → settle-summaries → trace-hooks → app-deps.
 */
export function traceHooks(deps: AppDeps): TraceHooks {
  return (deps.services.traceHooks ??= { onTracesProcessed: [] });
}
