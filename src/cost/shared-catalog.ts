import type { SqlHandle } from '../platform/postgres/postgres.js';
import { publishEvent } from '../platform/postgres/shared-events.js';
import { catalogFromProviders, type PriceCatalog } from './price-catalog.js';

/**
 * The refreshed price catalog, shared through PostgreSQL (`shared_state`, sql/014): the leader
 * stores what it fetched and announces it; every process loads the stored one. The announcement
 * carries only the topic (NOTIFY payloads are limited to 8000 bytes).
 */

export const PRICE_CATALOG_TOPIC = 'price_catalog';
const STATE_NAME = 'price_catalog';

interface StoredCatalog {
  providers: unknown;
  fetchedAt: string;
  origin: string;
}

export async function shareCatalog(sql: SqlHandle, catalog: PriceCatalog): Promise<void> {
  const value: StoredCatalog = { providers: catalog.providers, fetchedAt: catalog.fetchedAt.toISOString(), origin: catalog.origin };
  await sql`
    insert into shared_state (name, value, updated_at) values (${STATE_NAME}, ${sql.json(value as never)}, now())
    on conflict (name) do update set value = excluded.value, updated_at = now()`;
  await publishEvent(sql, PRICE_CATALOG_TOPIC);
}

/** The catalog the leader last stored, or null (none yet, or it no longer validates). */
export async function loadSharedCatalog(sql: SqlHandle): Promise<PriceCatalog | null> {
  const [row] = await sql<{ value: StoredCatalog }[]>`select value from shared_state where name = ${STATE_NAME}`;
  if (!row) return null;
  try {
    return catalogFromProviders(row.value.providers, new Date(row.value.fetchedAt), row.value.origin, 'refresh');
  } catch {
    return null;
  }
}
