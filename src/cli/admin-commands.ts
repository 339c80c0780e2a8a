import { backfillCostsCommand } from '../cost/cost-module.js';
import type { AdminCommand } from './admin-command.js';

/** Every admin CLI command. Feature modules define theirs (e.g. backfill-costs) and are listed here. */
export const adminCommands: AdminCommand[] = [backfillCostsCommand];
