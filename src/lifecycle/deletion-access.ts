/**
 * What another feature uses of deletions: the projects module starts a whole project's deletion in
 * the transaction that deletes the project's row, then wakes this process's runner.
 */
import crypto from 'node:crypto';
import type { AppDeps } from '../app/app-deps.js';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import type { Origin } from '../spans/origin.js';
import type { Deletion } from './deletion-schemas.js';
import { insertDeletion, toDeletion } from './deletion-store.js';

export type { Deletion } from './deletion-schemas.js';

/** Records a deletion of everything the project stored; pass the transaction that deletes the project. */
export async function createProjectDeletion(sql: SqlHandle, tenantId: string, projectId: string, origin: Origin): Promise<Deletion> {
  return toDeletion(await insertDeletion(sql, { id: crypto.randomUUID(), tenantId, projectId, selection: { kind: 'project' }, origin }));
}

/** Wakes this process's deletion runner after a commit that created a job (other processes poll). */
export function kickDeletions(deps: AppDeps): void {
  deps.services.deletionRunner?.kick();
}
