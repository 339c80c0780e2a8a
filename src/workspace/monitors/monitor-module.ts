import type { AppDeps } from '../../app/app-deps.js';
import type { LookoutModule } from '../../app/module.js';
import { traceHooks } from '../../ingest/trace-hook-registry.js';
import { forgetWatchingMonitors, MONITORS_CHANGED_TOPIC } from './monitor-store.js';
import { monitorEvaluator } from './monitor-evaluator.js';
import { monitorRoutes } from './monitor-routes.js';

/**
 * Monitors: CRUD routes and the evaluator, which listens to every processed trace
 * through the trace hooks (registered in init, so ingestion never imports this module).
 */
export const monitorsModule: LookoutModule = {
  name: 'monitors',
  init(deps: AppDeps) {
    // After the issues module's extraction (modules init in order): monitors see a group's issues extracted.
    const hooks = traceHooks(deps);
    hooks.onTracesProcessed.push(monitorEvaluator(deps).onTracesProcessed);
    // Payloads carry span attributes only for projects a monitor reads them in.
    hooks.spanAttributesWanted = monitorEvaluator(deps).spanAttributesWanted;
    // Another process's monitor write drops this process's cached monitor lists.
    deps.services.events?.on(MONITORS_CHANGED_TOPIC, forgetWatchingMonitors);
  },
  api: monitorRoutes,
};
