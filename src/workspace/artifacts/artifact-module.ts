import type { LookoutModule } from '../../app/module.js';
import { artifactRoutes } from './artifact-routes.js';

/** Agent understanding versions: append-only, numbered per (project, agent). */
export const artifactsModule: LookoutModule = { name: 'artifacts', api: artifactRoutes };
