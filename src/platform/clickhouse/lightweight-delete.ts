/**
 * Lightweight DELETE where a table's rows live, and the wait for it to apply. Used by the ingest
 * writer (the rows of a failed flush) and by deletion jobs (src/lifecycle/); the same machinery
 * submits other mutations (mutateWhereRowsLive: a retention change's ALTER … UPDATE).
 *
 * A lightweight DELETE marks rows deleted through a mutation; once that applies they are gone from
 * every read, and the engine drops them from disk at its next merges. The statement is submitted
 * without waiting inside it (lightweight_deletes_sync = 0): the embedded engine can hold a mutation
 * behind its background merges for long stretches, and a statement that waits for it holds its
 * connection all that time. The caller waits here instead, up to a bound of its own, by polling
 * system.mutations, and may go on asking after that bound (`appliedNow`). A read that must already
 * see a submitted delete applied reads with apply_mutations_on_fly = 1 (mutations-on-fly.ts).
 *
 * The wait is for this call's own deletes only, never for another mutation of the same tables (an
 * operator's ALTER, a long column rewrite, started meanwhile): each call's statements carry a
 * marker of their own in their condition (a constant that is always true), which system.mutations
 * shows in the command. A mutation started before them still delays them: the engine applies a
 * table's mutations in order.
 *
 * Where the rows live: one node, the tables as named. A replicated cluster: each `<table>_local`
 * through ON CLUSTER (the Distributed table under the plain name takes no DELETE). A cluster
 * without replication (CLICKHOUSE_CLUSTER_NODES): each node's `<table>_local`, node by node, as
 * migrations run there.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseStore } from './clickhouse.js';
import type { WriteLane } from './sql/statement-runner.js';
import { param, raw, sql, type Fragment, type SqlValue } from './sql/fragment.js';

/** One table's delete: the table's plain name (from code) and the condition of the rows to delete. */
export interface TableDelete {
  table: string;
  where: Fragment;
}

const POLL_MS = 50;

/** What a submission leaves its caller: whether the mutations applied in time, and a way to ask again. */
export interface SubmittedDeletes {
  /** True when every mutation applied within the call's wait. */
  applied: boolean;
  /**
   * Whether every one of these mutations has applied by now, checked once where they run (each node,
   * the `_local` tables of a cluster): a caller that waits longer than the call's bound polls this
   * between checks of its own (a job that must stop on shutdown). Only these mutations count, never
   * another mutation of the tables.
   */
  appliedNow(): Promise<boolean>;
}

/**
 * Submits every delete and waits until each of them has applied, or until `waitMs` passed.
 * Throws when the store does not take a delete. `afterSubmit` runs once the deletes are submitted,
 * before the wait (per node on a cluster without replication): a test's seam.
 */
export async function lightweightDelete(
  ch: ClickHouseStore,
  deletes: readonly TableDelete[],
  options: { lane: WriteLane; waitMs: number; afterSubmit?: () => Promise<void> },
): Promise<SubmittedDeletes> {
  return mutateWhereRowsLive(
    ch,
    deletes.map((d) => ({
      table: d.table,
      statement: (target, marker) => sql`DELETE FROM ${raw(target)} WHERE (${d.where}) AND ${marker} != '' SETTINGS lightweight_deletes_sync = 0`,
    })),
    options,
  );
}

/**
 * One table's mutation: `statement` builds it for `target` (the table where its rows live, with ON
 * CLUSTER when that is how it is reached) and must put `marker` in its condition as `marker != ''`.
 */
export interface TableMutation {
  table: string;
  statement: (target: string, marker: SqlValue) => Fragment;
}

/**
 * Submits each table's mutation where the table's rows live (the machinery lightweightDelete uses,
 * also for other mutations such as a retention change's ALTER … UPDATE) without waiting inside the
 * statement, then waits until each has applied or until `waitMs` passed.
 */
export async function mutateWhereRowsLive(
  ch: ClickHouseStore,
  mutations: readonly TableMutation[],
  options: { lane: WriteLane; waitMs: number; afterSubmit?: () => Promise<void> },
): Promise<SubmittedDeletes> {
  if (mutations.length === 0) return { applied: true, appliedNow: async () => true };
  const deadline = Date.now() + options.waitMs;
  const marker = `lookout-mutation-${randomUUID()}`;
  const markerParam = param('String', marker);
  const localNames = [...new Set(mutations.map((m) => `${m.table}_local`))];
  if (ch.nodes.length > 0) {
    // Node by node, as migrations run there: each node's mutations are submitted, then awaited.
    const onEachNode = async (step: (node: ClickHouseStore) => Promise<boolean>) => {
      let all = true;
      for (const url of ch.nodes) {
        const node = await ch.openNode(url);
        try {
          all = (await step(node)) && all;
        } finally {
          await node.close();
        }
      }
      return all;
    };
    const applied = await onEachNode(async (node) => {
      for (const m of mutations) await node.command(m.statement(node.table(`${m.table}_local`), markerParam), options.lane);
      await options.afterSubmit?.();
      return ownMutationsApplied(node, localNames, marker, deadline, options.lane);
    });
    return { applied, appliedNow: () => onEachNode((node) => ownMutationsApplied(node, localNames, marker, Date.now(), options.lane)) };
  }
  for (const m of mutations) {
    const target = ch.cluster ? `${ch.table(`${m.table}_local`)} ON CLUSTER \`${ch.cluster}\`` : ch.table(m.table);
    await ch.command(m.statement(target, markerParam), options.lane);
  }
  await options.afterSubmit?.();
  const names = ch.cluster ? localNames : [...new Set(mutations.map((m) => m.table))];
  const applied = await ownMutationsApplied(ch, names, marker, deadline, options.lane);
  return { applied, appliedNow: () => ownMutationsApplied(ch, names, marker, Date.now(), options.lane) };
}

/**
 * Whether the mutations marked `marker` have applied on every one of `tables` of this store, waiting
 * until `deadline` at most (a deadline already passed: one check). Each table must show its own
 * mutation done: one not found (yet) counts as undone, so a marker the engine did not keep can never
 * pass for applied.
 */
async function ownMutationsApplied(ch: ClickHouseStore, tables: readonly string[], marker: string, deadline: number, lane: WriteLane): Promise<boolean> {
  for (;;) {
    const rows = await ch.read<{ table: string; undone: number | string }>(
      sql`SELECT table, countIf(is_done = 0) AS undone FROM system.mutations
          WHERE database = ${param('String', ch.database)} AND table IN ${param('Array(String)', tables)} AND position(command, ${param('String', marker)}) > 0
          GROUP BY table`,
      { lane },
    );
    if (rows.length === tables.length && rows.every((r) => Number(r.undone) === 0)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
