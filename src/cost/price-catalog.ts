import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { waitForUpdate, type ModelInfo, type Provider } from '@pydantic/genai-prices';

/**
 * A price catalog: the providers and models of @pydantic/genai-prices plus the
 * time its prices were fetched, which the API reports as `pricing_fetched_at`.
 *
 * A catalog is an immutable value passed explicitly to every pricing function, so tests inject
 * their own and a refresh swaps the whole value at once (see price-book.ts).
 */
export interface PriceCatalog {
  providers: readonly Provider[];
  /** When these prices were fetched: the bundled snapshot's time, or the time of a successful refresh. */
  fetchedAt: Date;
  source: 'bundled' | 'refresh' | 'injected';
  /** Package version for the bundled snapshot, the URL for a refresh, a label for injected catalogs. */
  origin: string;
}

/**
 * The package records no snapshot time of its own (its dist holds only the data array), so the
 * snapshot time of a bundled version is its registry publish time: the data is frozen into the
 * build when the package is published. Add a line when upgrading the package.
 */
export const BUNDLED_SNAPSHOT_TIMES: Readonly<Record<string, string>> = {
  '0.1.8': '2026-09-23T10:11:04.622Z',
};

const require = createRequire(import.meta.url);

function installedPackageJsonPath(): string {
  // The package's `exports` hides package.json; its entry point sits in dist/, one level below.
  return path.join(path.dirname(require.resolve('@pydantic/genai-prices')), '..', 'package.json');
}

/**
 * Snapshot time of the installed package: the known publish time of its version, else (a version
 * this table does not know yet) the modification time of its installed package.json, which is no
 * earlier than the snapshot. npm's normalised tarball time (1985) is not a real time: null then.
 */
export function bundledSnapshotTime(): { version: string; fetchedAt: Date | null } {
  const file = installedPackageJsonPath();
  const version = String((JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? 'unknown');
  const known = BUNDLED_SNAPSHOT_TIMES[version];
  if (known) return { version, fetchedAt: new Date(known) };
  const mtime = fs.statSync(file).mtime;
  return { version, fetchedAt: mtime.getUTCFullYear() >= 2000 ? mtime : null };
}

/** The catalog bundled in the installed @pydantic/genai-prices. */
export async function loadBundledCatalog(): Promise<PriceCatalog> {
  // waitForUpdate() resolves to the active provider data; Lookout never calls the package's own
  // updatePrices, so that is always the bundled snapshot.
  const providers = await waitForUpdate();
  if (!providers) throw new Error('@pydantic/genai-prices returned no bundled data');
  const { version, fetchedAt } = bundledSnapshotTime();
  return {
    providers: validateProviders(providers),
    fetchedAt: fetchedAt ?? new Date(0),
    source: 'bundled',
    origin: `@pydantic/genai-prices@${version}`,
  };
}

/** A catalog from provider data given in code (tests, or a custom price list). */
export function catalogFromProviders(providers: unknown, fetchedAt: Date, origin = 'injected', source: PriceCatalog['source'] = 'injected'): PriceCatalog {
  return { providers: validateProviders(providers), fetchedAt, source, origin };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isModel(value: unknown): value is ModelInfo {
  return isRecord(value) && typeof value.id === 'string' && isRecord(value.match) && (isRecord(value.prices) || Array.isArray(value.prices));
}

/**
 * Checks the shape the package's data format (prices/new_data/v2/data.json) promises: an array of
 * providers, each with an id, a name and models that have an id, a match rule and prices. A
 * refresh that fails this check is rejected whole and the last good catalog stays.
 */
export function validateProviders(value: unknown): Provider[] {
  if (!Array.isArray(value) || value.length === 0) throw new Error('price data must be a non-empty array of providers');
  return value.map((provider, i) => {
    if (!isRecord(provider) || typeof provider.id !== 'string' || !Array.isArray(provider.models)) {
      throw new Error(`price data: provider ${i} lacks id or models`);
    }
    const bad = provider.models.findIndex((m) => !isModel(m));
    if (bad >= 0) throw new Error(`price data: provider ${provider.id} model ${bad} lacks id, match or prices`);
    return {
      ...provider,
      name: typeof provider.name === 'string' ? provider.name : provider.id,
      api_pattern: typeof provider.api_pattern === 'string' ? provider.api_pattern : '',
    } as Provider;
  });
}
