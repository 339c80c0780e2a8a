import type { LookoutModule } from './module.js';
import { projectRoutes } from './workspace/projects/project-routes.js';
import { tenancyRoutes } from './tenancy/tenancy-routes.js';

/** Every feature module, in start order. Add a module here to mount its routes and run its background work. */
export const modules: LookoutModule[] = [
  { name: 'tenancy', api: tenancyRoutes },
  { name: 'projects', api: projectRoutes },
];
