import { isUuid } from '../platform/uuid.js';
import { traceKeyString, type TraceKey } from './stored-spans.js';

/** A key as PostgreSQL's uuid columns hold it, and return it (lower case). */
export function canonicalKey(k: TraceKey): string {
  return traceKeyString({ tenantId: k.tenantId.toLowerCase(), projectId: k.projectId.toLowerCase(), traceId: k.traceId.toLowerCase() });
}

/** Whether a key can be in a table keyed by uuid columns (one that is not has no row there; a cast of it would fail the statement). */
export function isUuidKey(k: TraceKey): boolean {
  return isUuid(k.tenantId) && isUuid(k.projectId) && isUuid(k.traceId);
}

/**
 * A batch of trace keys as the array parameters of one PostgreSQL statement (the stored-trace
 * registry and the settle queue: uuid key columns).
 *
 * A flush carries thousands of traces of usually one tenant and project: sending the three ids per
 * trace repeated those two in every element (~80 of ~120 bytes a key, each escaped by the client and
 * parsed by the server). So each (tenant, project) pair is sent once, and a key is its pair's position
 * and its trace id; the statement expands them with
 *
 *   from unnest(${pairs}::int[], ${traces}::uuid[]) with ordinality as k(g, tr, i)
 *   … (${tenants}::uuid[])[k.g], (${projects}::uuid[])[k.g] …
 *
 * and answers with `i`, the key's 1-based position, instead of echoing the key back.
 *
 * Keys are folded by canonicalKey: PostgreSQL's uuid takes any letter case, so two spellings of one
 * key are one row, which a multi-row upsert may not touch twice. They come out in key order (uuid
 * order is the lower-case text's): statements of several processes lock shared rows in one order.
 */
export interface TraceKeyParams<T extends TraceKey> {
  /** One entry per distinct key, in key order: the first spelling seen, merged by the caller's rule. */
  rows: T[];
  /** Per distinct (tenant, project) pair, lower case. */
  tenants: string[];
  projects: string[];
  /** Per row: its pair's 1-based position in tenants/projects. */
  pairs: number[];
  /** Per row: its trace id. */
  traces: string[];
  /** Per key given, in the caller's order: its row's position in `rows`. */
  rowOf: number[];
}

/**
 * Folds `keys` into one row per key (`merge` combines a later spelling or repeat into the row kept,
 * which starts as `start(key)`) and lays them out as parameters.
 */
export function traceKeyParams<K extends TraceKey, T extends TraceKey>(
  keys: readonly K[],
  start: (key: K) => T,
  merge: (row: T, key: K) => void = () => {},
): TraceKeyParams<T> {
  type Entry = { tenant: string; project: string; trace: string; row: T; at: number };
  const byCanonical = new Map<string, Entry>();
  const entryOf: Entry[] = [];
  for (const k of keys) {
    const tenant = k.tenantId.toLowerCase();
    const project = k.projectId.toLowerCase();
    const trace = k.traceId.toLowerCase();
    const canonical = `${tenant}\u0000${project}\u0000${trace}`;
    let entry = byCanonical.get(canonical);
    if (!entry) byCanonical.set(canonical, (entry = { tenant, project, trace, row: start(k), at: 0 }));
    else merge(entry.row, k);
    entryOf.push(entry);
  }
  // Field by field: a flush's keys share their tenant and project, compared once each, not as a prefix.
  const order = (a: string, b: string) => (a === b ? 0 : a < b ? -1 : 1);
  const sorted = [...byCanonical.values()].sort((a, b) => order(a.tenant, b.tenant) || order(a.project, b.project) || order(a.trace, b.trace));
  const params: TraceKeyParams<T> = { rows: [], tenants: [], projects: [], pairs: [], traces: [], rowOf: [] };
  for (const entry of sorted) {
    const { tenant, project, trace, row } = entry;
    // Sorted by key, so each pair's keys are consecutive.
    const last = params.tenants.length - 1;
    if (last < 0 || params.tenants[last] !== tenant || params.projects[last] !== project) {
      params.tenants.push(tenant);
      params.projects.push(project);
    }
    entry.at = params.rows.length;
    params.rows.push(row);
    params.pairs.push(params.tenants.length);
    params.traces.push(trace);
  }
  params.rowOf = entryOf.map((e) => e.at);
  return params;
}
