import type { LookoutModule } from '../../app/module.js';
import { metricRoutes } from './metric-routes.js';

/** Metrics: preset OBSERVED metrics per project and metrics that take events. */
export const metricsModule: LookoutModule = { name: 'metrics', api: metricRoutes };
