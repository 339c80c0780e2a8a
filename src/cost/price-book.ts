import { catalogFromProviders, loadBundledCatalog, type PriceCatalog } from './price-catalog.js';

/**
 * The process's current price catalog. It starts with the bundled snapshot; when
 * PRICES_REFRESH_URL is configured it refreshes from there (same format as the package's own
 * remote data.json) and keeps the last good catalog whenever a refresh fails. A null catalog means
 * no prices at all: stored costs are then written as `unavailable` and backfilled later.
 */
export interface RefreshResult {
  ok: boolean;
  error?: string;
  fetchedAt?: string;
}

export type FetchLike = (url: string, init?: { signal?: AbortSignal }) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

export class PriceBook {
  #catalog: PriceCatalog | null;
  #timer: NodeJS.Timeout | null = null;
  lastRefreshError: string | null = null;

  constructor(initial: PriceCatalog | null) {
    this.#catalog = initial;
  }

  current(): PriceCatalog | null {
    return this.#catalog;
  }

  /** Replaces the catalog (tests, or an operator-provided price list). */
  set(catalog: PriceCatalog | null): void {
    this.#catalog = catalog;
  }

  /**
   * Fetches provider data from `url`; on success it becomes the catalog with fetchedAt = now.
   * Any failure (network, status, JSON, shape) leaves the current catalog in place.
   */
  async refresh(url: string, fetchImpl: FetchLike = fetch, timeoutMs = 30_000): Promise<RefreshResult> {
    try {
      const response = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) throw new Error(`price refresh answered HTTP ${response.status}`);
      const catalog = catalogFromProviders(await response.json(), new Date(), url, 'refresh');
      this.#catalog = catalog;
      this.lastRefreshError = null;
      return { ok: true, fetchedAt: catalog.fetchedAt.toISOString() };
    } catch (error) {
      this.lastRefreshError = (error as Error).message;
      return { ok: false, error: this.lastRefreshError };
    }
  }

  /** Refreshes now and then every `intervalMs`; returns a stop function. Failures are reported, never thrown. */
  startAutoRefresh(url: string, intervalMs: number, onResult?: (result: RefreshResult) => void, fetchImpl?: FetchLike): () => void {
    this.stopAutoRefresh();
    const tick = () => void this.refresh(url, fetchImpl).then((r) => onResult?.(r));
    tick();
    this.#timer = setInterval(tick, intervalMs);
    this.#timer.unref();
    return () => this.stopAutoRefresh();
  }

  stopAutoRefresh(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

let shared: Promise<PriceBook> | null = null;

/** The process-wide price book, created from the bundled catalog on first use. */
export function defaultPriceBook(): Promise<PriceBook> {
  shared ??= loadBundledCatalog().then((catalog) => new PriceBook(catalog));
  return shared;
}

/** The default book's current catalog. */
export async function currentCatalog(): Promise<PriceCatalog | null> {
  return (await defaultPriceBook()).current();
}
