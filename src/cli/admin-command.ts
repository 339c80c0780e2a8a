import type { ParseArgsConfig } from 'node:util';
import type { AppDeps } from '../app-deps.js';

/**
 * One admin CLI command. Its own file so a feature module can define a command (cost's
 * backfill-costs) without importing the list of commands that imports it back.
 */
export interface AdminCommand {
  name: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(deps: AppDeps, values: Record<string, string | boolean | undefined>): Promise<unknown>;
}
