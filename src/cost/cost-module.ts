import { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import type { AdminCommand } from '../cli/admin-command.js';
import { ValidationError } from '../platform/http/errors.js';
import { defineRoute, projectForPrincipal } from '../app/route.js';
import type { LookoutModule } from '../app/module.js';
import { backfillCosts } from './backfill.js';
import { BackfillCostsBody, BackfillResult } from './cost-shapes.js';
import { defaultPriceBook, type PriceBook } from './price-book.js';
import { loadSharedCatalog, PRICE_CATALOG_TOPIC, shareCatalog } from './shared-catalog.js';

declare module '../app/app-deps.js' {
  interface ServiceRegistry {
    /** The process's price book: ingest-time pricing, query-time cost and the backfill read it. */
    priceBook?: PriceBook;
  }
}

/**
 * The cost module: the process's price book (bundled catalog, refreshed from PRICES_REFRESH_URL
 * when set), the pricing hook ingestion calls per processed trace, the admin backfill route and
 * the `backfill-costs` admin command.
 *
 * With several processes the refresh is a leader job (src/platform/postgres/leader.ts): one process fetches,
 * stores the catalog in PostgreSQL and announces it; every process loads it at start and on each
 * announcement, so all of them price traces with the same catalog.
 */
export const PRICE_REFRESH_INTERVAL_MS = 24 * 60 * 60 * 1000;

function bookOf(deps: AppDeps): PriceBook | undefined {
  return deps.services.priceBook;
}

async function refreshIfConfigured(deps: Pick<AppDeps, 'config' | 'logger'>, book: PriceBook): Promise<void> {
  const url = deps.config.pricesRefreshUrl;
  if (!url) return;
  const result = await book.refresh(url);
  if (!result.ok) deps.logger.warn({ error: result.error }, 'price refresh failed; keeping the last good catalog');
}

function costRoutes(deps: AppDeps): Router {
  const router = Router();
  defineRoute<BackfillCostsBody | undefined>(router, deps, {
    method: 'post',
    path: '/admin/backfill-costs',
    tag: 'admin',
    scope: 'admin',
    summary: "Price the tenant's trace.processed rows written without a price catalog (docs/cost.md)",
    body: BackfillCostsBody,
    responses: { 200: { description: 'What the run priced', schema: BackfillResult } },
    handler: async ({ principal, tenantId, body }): Promise<BackfillResult> => {
      const named = body?.project_id ?? principal.projectId ?? undefined;
      if (principal.projectId && named?.toLowerCase() !== principal.projectId) throw new ValidationError('project_id: outside this key');
      // Its stored id: the body's may differ in letter case, and ClickHouse compares text.
      const projectId = named ? (await projectForPrincipal(deps, principal, named)).id : undefined;
      const book = bookOf(deps) ?? (await defaultPriceBook());
      return backfillCosts(deps.ch, { tenantId, projectId, catalog: book.current() });
    },
  });
  return router;
}

export const costModule: LookoutModule = {
  name: 'cost',
  async init(deps) {
    // The process-wide book: query-time cost (cost-object.ts) reads the same one, and ingestion
    // (listed after cost) prices settled traces with its current catalog, so a refresh applies to the next round.
    const book = await defaultPriceBook();
    deps.services.priceBook = book;
    const adopt = async () => {
      const shared = await loadSharedCatalog(deps.sql);
      if (shared && shared.fetchedAt.getTime() > (book.current()?.fetchedAt.getTime() ?? 0)) book.set(shared);
    };
    await adopt();
    deps.services.events?.on(PRICE_CATALOG_TOPIC, adopt);
  },
  api: costRoutes,
  start(deps) {
    const book = bookOf(deps);
    const url = deps.config.pricesRefreshUrl;
    const leader = deps.services.leader;
    if (!book || !url || !leader) return;
    leader.every('price-refresh', PRICE_REFRESH_INTERVAL_MS, async () => {
      const result = await book.refresh(url);
      if (!result.ok) {
        deps.logger.warn({ error: result.error }, 'price refresh failed; keeping the last good catalog');
        return;
      }
      deps.logger.info({ fetched_at: result.fetchedAt }, 'price catalog refreshed');
      await shareCatalog(deps.sql, book.current()!);
    });
  },
};

/** `npm run admin -- backfill-costs [--tenant ID] [--project ID]`. */
export const backfillCostsCommand: AdminCommand = {
  name: 'backfill-costs',
  usage: 'backfill-costs [--tenant TENANT_ID] [--project PROJECT_ID]',
  options: { tenant: { type: 'string' }, project: { type: 'string' } },
  async run(deps, values) {
    const book = await defaultPriceBook();
    await refreshIfConfigured(deps, book);
    return backfillCosts(deps.ch, {
      tenantId: values.tenant ? String(values.tenant) : undefined,
      projectId: values.project ? String(values.project) : undefined,
      catalog: book.current(),
    });
  },
};
