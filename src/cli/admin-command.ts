import type { ParseArgsConfig } from 'node:util';
import type { AppDeps } from '../app/app-deps.js';
import type { MigrateMode } from '../platform/migrations.js';

/**
 * One admin CLI command. Its own file so a feature module can define a command (cost's
 * backfill-costs) without importing the list of commands that imports it back.
 */
export interface AdminCommand {
  name: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** How the stores' schema is prepared before the command runs (default: as LOOKOUT_MIGRATE says). */
  migrate?: MigrateMode;
  run(deps: AppDeps, values: Record<string, string | boolean | undefined>): Promise<unknown>;
}
