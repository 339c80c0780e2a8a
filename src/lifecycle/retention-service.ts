/**
 * Retention as the routes see it: route → this service → retention-store (PostgreSQL, the settings
 * the API answers) and retention-engine (ClickHouse, where the TTL enforces them).
 *
 * A change is written to both stores in one PostgreSQL transaction that also serializes the tenant's
 * changes (an advisory lock per tenant): ClickHouse is told first, and the settings commit only once
 * it took the change; a failure there rolls the PostgreSQL side back and answers 503, and the same
 * request can simply be sent again. The answer waits (up to APPLY_WAIT_MS) for the engine to apply
 * the change to stored rows, so a shorter setting has removed what it expires when the answer comes.
 */
import type { AppDeps } from '../app/app-deps.js';
import { ValidationError } from '../platform/http/errors.js';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { applyRetention } from './retention-engine.js';
import type { Retention, RetentionInput } from './retention-schemas.js';
import { projectRetention, tenantRetention, upsertProjectRetention, upsertTenantRetention } from './retention-store.js';

/** How long a change waits for ClickHouse to update stored rows before answering (it goes on in the background). */
export const APPLY_WAIT_MS = 30_000;

function checked(input: RetentionInput): RetentionInput {
  if (input.content_days > input.analytics_days) {
    throw new ValidationError(`content_days: must be at most analytics_days (${input.analytics_days})`);
  }
  return input;
}

/** One retention change of a tenant at a time, across processes, until the transaction ends. */
async function lockTenant(tx: SqlHandle, tenantId: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext(${`retention:${tenantId}`}))`;
}

export class RetentionService {
  constructor(private readonly deps: Pick<AppDeps, 'sql' | 'ch'>) {}

  project(tenantId: string, projectId: string): Promise<Retention> {
    return projectRetention(this.deps.sql, tenantId, projectId);
  }

  tenant(tenantId: string): Promise<Retention> {
    return tenantRetention(this.deps.sql, tenantId);
  }

  async setProject(tenantId: string, projectId: string, input: RetentionInput): Promise<Retention> {
    const values = checked(input);
    return this.deps.sql.begin(async (tx) => {
      await lockTenant(tx, tenantId);
      const retention = await upsertProjectRetention(tx, tenantId, projectId, values);
      await applyRetention(this.deps.ch, { tenantId, projectId }, values, APPLY_WAIT_MS);
      return retention;
    });
  }

  async setTenant(tenantId: string, input: RetentionInput): Promise<Retention> {
    const values = checked(input);
    return this.deps.sql.begin(async (tx) => {
      await lockTenant(tx, tenantId);
      const { retention, ownSettings } = await upsertTenantRetention(tx, tenantId, values);
      await applyRetention(this.deps.ch, { tenantId, projectId: null, except: ownSettings }, values, APPLY_WAIT_MS);
      return retention;
    });
  }
}
