import type { LookoutModule } from './module.js';
import { projectRoutes } from '../workspace/projects/project-routes.js';
import { monitorsModule } from '../workspace/monitors/monitor-module.js';
import { metricsModule } from '../workspace/metrics/metric-module.js';
import { codeHostModule } from '../workspace/code-host/code-host-module.js';
import { artifactsModule } from '../workspace/artifacts/artifact-module.js';
import { tenancyRoutes } from '../tenancy/tenancy-routes.js';
import { issuesModule } from '../workspace/issues/issue-module.js';
import { webhooksModule } from '../workspace/webhooks/webhook-module.js';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import { ingestModule } from '../ingest/ingest-module.js';
import { traceRoutes } from '../traces/trace-routes.js';
import { costModule } from '../cost/cost-module.js';
import { analyticsQueryModule } from '../analytics/query/router.js';
import { presetViewRoutes } from '../analytics/views/view-routes.js';
import { mcpRouter } from '../mcp/mcp-router.js';
import { lifecycleModule } from '../lifecycle/lifecycle-module.js';
import { exportModule } from '../lifecycle/export-routes.js';

/** Every feature module, in start order. Add a module here to mount its routes and run its background work. */
export const modules: LookoutModule[] = [
  { name: 'tenancy', api: tenancyRoutes },
  { name: 'projects', api: projectRoutes },
  lifecycleModule,
  exportModule,
  costModule,
  analyticsQueryModule,
  { name: 'analytics-views', api: presetViewRoutes },
  issuesModule,
  monitorsModule,
  webhooksModule,
  metricsModule,
  codeHostModule,
  artifactsModule,
  // After the trace-hook listeners (issues, monitors): modules stop in reverse, and ingestion's stop settles open traces.
  ingestModule,
  { name: 'traces', api: traceRoutes },
  { name: 'mcp', root: mcpRouter },
  // Last: its root router answers HTML navigations that no other router claimed (never /api, /v1, /mcp).
  { name: 'dashboard', root: dashboardRoutes },
];
