/**
 * The embedded engine's settings that decide how analytics statements read (issue 17): each printed
 * beside ClickHouse's own default (and every setting chdb changes), so a figure taken on chdb can be
 * weighed against a server's. Opens a scratch data directory and removes it.
 *
 *   npx tsx bench/query/engine-settings.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openClickHouse } from '../../src/platform/clickhouse/clickhouse.js';

const READ_SETTINGS = [
  'max_threads', 'max_block_size', 'max_final_threads', 'max_streams_for_merge_tree_reading', 'use_uncompressed_cache',
  'local_filesystem_read_method', 'min_bytes_to_use_direct_io', 'compile_expressions', 'compile_aggregate_expressions',
  'optimize_move_to_prewhere_if_final', 'enable_vertical_final', 'split_parts_ranges_into_intersecting_and_non_intersecting_final',
  'split_intersecting_parts_ranges_into_layers_final', 'do_not_merge_across_partitions_select_final', 'optimize_read_in_order',
  'use_query_condition_cache', 'query_plan_optimize_lazy_materialization', 'enable_analyzer',
];
const SERVER_SETTINGS = ['uncompressed_cache_size', 'mark_cache_size', 'page_cache_max_size', 'background_pool_size', 'max_server_memory_usage'];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-engine-settings-'));
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: dir });
try {
  const rows = async (query: string, params: Record<string, unknown>) =>
    (await ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<Record<string, string>>();
  const [version] = await rows('SELECT version() AS v', {});
  console.log(`engine ${version.v}, ${os.cpus().length} cores`);
  for (const r of await rows('SELECT name, value, default, changed FROM system.settings WHERE changed OR name IN {names:Array(String)} ORDER BY changed DESC, name', { names: READ_SETTINGS })) {
    console.log(`${r.name.padEnd(66)} ${String(r.value).padStart(18)}  default ${r.default}${Number(r.changed) ? '  (changed by chdb)' : ''}`);
  }
  for (const r of await rows('SELECT name, value, changed FROM system.server_settings WHERE name IN {names:Array(String)} ORDER BY name', { names: SERVER_SETTINGS })) {
    console.log(`server ${r.name.padEnd(59)} ${String(r.value).padStart(18)}${Number(r.changed) ? '  (changed)' : ''}`);
  }
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
