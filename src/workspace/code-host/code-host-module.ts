import type { LookoutModule } from '../../app/module.js';
import { codeHostRoutes } from './code-host-routes.js';

/** The per-project code-host connection, repository binding and feature switch. */
export const codeHostModule: LookoutModule = { name: 'code-host', api: codeHostRoutes };
