import type { AppDeps } from '../../app/app-deps.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { LinearTracker } from './linear-tracker.js';
import { LocalTracker } from './local-tracker.js';
import { secretBox } from '../../app/secret-box-access.js';
import type { TrackerSettingsRow } from './tracker-settings-store.js';
import { TrackerError, type TicketTracker, type TrackerProvider } from './tracker-types.js';

/** The tracker client for a provider, with the tenant's decrypted key for Linear. `sql` is the local provider's transaction. */
export function trackerFor(deps: AppDeps, sql: SqlHandle, tenantId: string, provider: TrackerProvider, settings: TrackerSettingsRow): TicketTracker {
  if (provider === 'local') return new LocalTracker(sql, tenantId, settings.provider === 'local' ? settings.team_name : 'Lookout');
  if (settings.provider !== 'linear' || !settings.api_key_encrypted) {
    throw new TrackerError('tracker_not_configured', 'Linear is not the configured ticket tracker; PUT /api/integrations/ticket-tracker first');
  }
  const apiKey = secretBox(deps).open(settings.api_key_encrypted, tenantId);
  if (apiKey === null) {
    throw new TrackerError('tracker_key_unreadable', 'The stored Linear API key cannot be decrypted with this server\'s secret key; PUT the key again');
  }
  return new LinearTracker(deps.config.linearApiUrl, apiKey);
}
