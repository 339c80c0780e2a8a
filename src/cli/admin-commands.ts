import type { ParseArgsConfig } from 'node:util';
import type { AppDeps } from '../app-deps.js';
import type { MigrateMode } from '../service.js';
import { backfillCostsCommand } from '../analytics/cost/cost-module.js';

/** One admin CLI command. Feature modules add theirs to `adminCommands` (e.g. backfill-costs). */
export interface AdminCommand {
  name: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** How the stores' schema is prepared before the command runs (default: as LOOKOUT_MIGRATE says). */
  migrate?: MigrateMode;
  run(deps: AppDeps, values: Record<string, string | boolean | undefined>): Promise<unknown>;
}

export const adminCommands: AdminCommand[] = [backfillCostsCommand];
