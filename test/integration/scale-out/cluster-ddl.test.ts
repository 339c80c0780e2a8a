/**
 * The cluster DDL chdb cannot run (Replicated engines need Keeper; ON CLUSTER needs the distributed
 * DDL queue), pinned as golden text. Run with UPDATE_GOLDEN=1 to rewrite the file after an intended
 * change, then review the diff like code. The Distributed half of the same layout runs for real in
 * explain-suite.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { migrationStateDdl, renderClickHouseMigration, runsThroughDistributed, SHARDING_KEYS, type ClickHouseLayout } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { readMigrations } from '../../../src/platform/migrations.js';

const layout: ClickHouseLayout = { database: 'lookout', cluster: 'lookout_cluster' };
const golden = path.join(projectRoot, 'test', 'golden', 'clickhouse-cluster', 'cluster-ddl.sql');
// Shards without replicas (CLICKHOUSE_CLUSTER_REPLICATED=false): migrated node by node, no Keeper.
const unreplicated: ClickHouseLayout = { ...layout, replicated: false };
const goldenUnreplicated = path.join(projectRoot, 'test', 'golden', 'clickhouse-cluster', 'cluster-ddl-unreplicated.sql');

function renderAll(l: ClickHouseLayout): string[] {
  return [migrationStateDdl(l), ...readMigrations(migrationDirs.clickhouse).flatMap((f) => renderClickHouseMigration(f.text, l))];
}

describe('ClickHouse cluster DDL', () => {
  it('matches the golden file', () => {
    const actual = `${renderAll(layout).join(';\n\n')};\n`;
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(golden, actual);
    expect(actual).toBe(fs.readFileSync(golden, 'utf8'));
  });

  it('gives every table a Replicated *_local table with its TTL and a Distributed table on its sharding key', () => {
    const statements = renderAll(layout);
    const tables = Object.keys(SHARDING_KEYS);
    for (const table of tables) {
      const local = statements.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}_local\` ON CLUSTER \`lookout_cluster\``));
      expect([table, local]).toEqual([table, expect.stringMatching(/ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/lookout\/\w+_local', '\{replica\}', \w+\)/)]);
      expect(local).toMatch(/TTL toDateTime\(timestamp\) \+ INTERVAL 90 DAY$/);
      const distributed = statements.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}\` ON CLUSTER`));
      expect(distributed).toBe(
        `CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}\` ON CLUSTER \`lookout_cluster\` AS \`lookout\`.\`${table}_local\`\nENGINE = Distributed(\`lookout_cluster\`, \`lookout\`, \`${table}_local\`, ${SHARDING_KEYS[table]})`,
      );
    }
    // Every version of a row lives on one shard: the key is a column of the table's sorting key.
    expect(SHARDING_KEYS.event_issue).toBe('cityHash64(event_id)');
    // The per-span event tables' trace_id is a UUID (migration 009): hashed as its text, the same
    // hash as the String trace ids of the other per-trace tables.
    for (const table of tables.filter((t) => t !== 'event_issue')) {
      expect([table, SHARDING_KEYS[table]]).toEqual([table, /^event_(generation_completed|tool_called|span_errored)$/.test(table) ? 'cityHash64(toString(trace_id))' : 'cityHash64(trace_id)']);
    }
    // An ALTER reaches the data (local) and the Distributed table's column list, in that order.
    const alters = statements.filter((s) => s.startsWith('ALTER TABLE'));
    expect(alters[0]).toMatch(/^ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`\n\s+ADD COLUMN IF NOT EXISTS cache_write_input_tokens/);
    expect(alters[1]).toMatch(/^ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`\n\s+ADD COLUMN IF NOT EXISTS cache_write_input_tokens/);
    let ttlChanges = 0;
    let indexChanges = 0;
    for (let i = 0; i < alters.length; i++) {
      const [, table, change] = /^ALTER TABLE `lookout`.`(\w+)_local` ON CLUSTER `lookout_cluster`\n([\s\S]*)$/.exec(alters[i]) ?? [];
      // A TTL change (clickhouse/015) or an index (021, 022) reaches the data alone: a Distributed table holds none and takes neither.
      if (/^\s*(MODIFY (TTL|COLUMN \w+ [^,]*\bTTL)|ADD INDEX|MATERIALIZE INDEX)\b/.test(change)) {
        if (/^\s*(ADD|MATERIALIZE) INDEX\b/.test(change)) indexChanges++;
        else ttlChanges++;
        expect(alters[i + 1]).not.toBe(`ALTER TABLE \`lookout\`.\`${table}\` ON CLUSTER \`lookout_cluster\`\n${change}`);
        continue;
      }
      expect(alters[i + 1]).toBe(`ALTER TABLE \`lookout\`.\`${table}\` ON CLUSTER \`lookout_cluster\`\n${change}`);
      i++;
    }
    // A backfill goes through the Distributed table, in the foreground, joining GLOBAL.
    const inserts = statements.filter((s) => s.startsWith('INSERT INTO `lookout`.`event_'));
    // 005's backfill, then for each of 009's and 010's three tables: the catch-up of a run stopped
    // after its swap, the copy, and the catch-up.
    expect(inserts).toHaveLength(19);
    for (const insert of inserts.slice(1)) {
      expect(insert).toMatch(/^INSERT INTO `lookout`.`event_\w+` \([^)]*\)\nSETTINGS distributed_foreground_insert = 1\nSELECT /);
      expect(insert).not.toMatch(/_local|\{db\}/);
    }
    expect(inserts[0]).toMatch(/^INSERT INTO `lookout`.`event_trace_processed` \([^)]*\)\nSETTINGS distributed_foreground_insert = 1\nSELECT /);
    expect(inserts[0]).not.toMatch(/_local|\{db\}/);
    expect(inserts[0].match(/GLOBAL LEFT JOIN/g)).toHaveLength(2);
    // 009's and 010's rebuild copies: sharded as their tables, and their Keeper path follows the
    // table's UUID (EXCHANGE TABLES swaps names; a path named after the copy would then belong to the
    // live table). 010's copies are partitioned by day.
    for (const version of ['v009', 'v010']) {
      for (const table of ['event_generation_completed', 'event_tool_called', 'event_span_errored']) {
        const copy = statements.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}_${version}_local\``));
        expect(copy).toMatch(/ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{uuid\}\/\{shard\}', '\{replica\}', inserted_at\)/);
        expect(copy).toContain(version === 'v010' ? 'PARTITION BY toDate(timestamp)' : 'PARTITION BY toYYYYMM(timestamp)');
        expect(statements).toContain(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}_${version}\` ON CLUSTER \`lookout_cluster\` AS \`lookout\`.\`${table}_${version}_local\`\nENGINE = Distributed(\`lookout_cluster\`, \`lookout\`, \`${table}_${version}_local\`, cityHash64(toString(trace_id)))`);
      }
    }
    // 009's and 010's rebuilds: the local tables swap, then each Distributed table is replaced over
    // its local table's new columns, with its sharding key.
    const eventExchanges = statements.filter((s) => s.startsWith('EXCHANGE TABLES `lookout`.`event_'));
    expect(eventExchanges).toHaveLength(6);
    for (const exchange of eventExchanges) {
      const [, table, version] = /^EXCHANGE TABLES `lookout`.`(\w+)_local` AND `lookout`.`\1_(v009|v010)_local` ON CLUSTER `lookout_cluster`$/.exec(exchange) ?? [];
      const next = statements.slice(statements.indexOf(exchange) + 1, statements.indexOf(exchange) + 3);
      expect(next).toEqual([`${table}`, `${table}_${version}`].map((name) =>
        `CREATE OR REPLACE TABLE \`lookout\`.\`${name}\` ON CLUSTER \`lookout_cluster\` AS \`lookout\`.\`${name}_local\`\nENGINE = Distributed(\`lookout_cluster\`, \`lookout\`, \`${name}_local\`, cityHash64(toString(trace_id)))`));
    }
    // Every table of a project reads its retention from its rows (clickhouse/015): a row TTL each, and column TTLs on spans and traces.
    expect(ttlChanges).toBe(Object.keys(SHARDING_KEYS).length + 2);
    // 021's index on spans and 022's on traces: each added and materialized on the local table.
    expect(indexChanges).toBe(4);
    // The retention settings the columns' defaults read (clickhouse/015): a Join table on every node, not sharded.
    expect(statements).toContain(
      'CREATE TABLE IF NOT EXISTS `lookout`.`retention_settings` ON CLUSTER `lookout_cluster`\n(\n    tenant_id String,\n    project_id String,\n    analytics_days UInt8,\n    content_days UInt8\n)\nENGINE = Join(ANY, LEFT, tenant_id, project_id)\nSETTINGS join_any_take_last_row = 1',
    );
    // Each table's two columns, and 017's copy of trace_content and 019's of traces (each created
    // twice: see below) with them.
    expect(statements.filter((s) => s.includes("joinGetOrNull('lookout.retention_settings'"))).toHaveLength(2 * Object.keys(SHARDING_KEYS).length + 4);
    // 019's rebuild of traces: the copy sharded as its table, with 015's TTLs, in granules of 256.
    const tracesCopies = statements.filter((s) => s.startsWith('CREATE TABLE IF NOT EXISTS `lookout`.`traces_v019_local`'));
    expect(tracesCopies).toHaveLength(2);
    for (const copy of tracesCopies) {
      expect(copy).toMatch(/ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{uuid\}\/\{shard\}', '\{replica\}', processed_at\)\n[\s\S]*\nTTL toDateTime\(timestamp\) \+ toIntervalDay\(analytics_days\)\nSETTINGS index_granularity = 256$/);
      expect(copy).toContain('agent_input_display String TTL toDateTime(timestamp) + toIntervalDay(content_days)');
    }
    // 017's rebuild of trace_content: the copy sharded as its table, its Keeper path by the table's
    // UUID (EXCHANGE TABLES swaps names, not paths), with 015's retention TTL; the catch-up of a
    // stopped run, the copy and the catch-up through the Distributed tables; after the swap each
    // Distributed table is replaced over its local table.
    const copies = statements.filter((s) => s.startsWith('CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017_local`'));
    expect(copies).toHaveLength(2);
    for (const copy of copies) {
      expect(copy).toMatch(/ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{uuid\}\/\{shard\}', '\{replica\}', processed_at\)\n[\s\S]*\nTTL toDateTime\(timestamp\) \+ toIntervalDay\(content_days\)\nSETTINGS index_granularity = 256$/);
      expect(copy).toContain('content_days UInt8 DEFAULT coalesce(');
    }
    expect(statements).toContain('CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_v017_local`\nENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_v017_local`, cityHash64(trace_id))');
    const contentInserts = statements.filter((s) => /^INSERT INTO `lookout`.`trace_content(_v017)?` \(/.test(s));
    expect(contentInserts).toHaveLength(3);
    for (const insert of contentInserts) expect(insert).toMatch(/^INSERT INTO `lookout`.`trace_content(_v017)?` \([^)]*\bcontent_days\)\nSETTINGS distributed_foreground_insert = 1\nSELECT /);
    const swap = statements.indexOf('EXCHANGE TABLES `lookout`.`trace_content_local` AND `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster`');
    expect(swap).toBeGreaterThan(0);
    expect(statements.slice(swap + 1, swap + 3)).toEqual(['trace_content', 'trace_content_v017'].map((name) =>
      `CREATE OR REPLACE TABLE \`lookout\`.\`${name}\` ON CLUSTER \`lookout_cluster\` AS \`lookout\`.\`${name}_local\`\nENGINE = Distributed(\`lookout_cluster\`, \`lookout\`, \`${name}_local\`, cityHash64(trace_id))`));
  });

  it('matches the golden file without replication', () => {
    const actual = `${renderAll(unreplicated).join(';\n\n')};\n`;
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(goldenUnreplicated, actual);
    expect(actual).toBe(fs.readFileSync(goldenUnreplicated, 'utf8'));
  });

  it('without replication: plain engines as on one node, no ON CLUSTER, the same Distributed tables and sharding', () => {
    const statements = renderAll(unreplicated);
    expect(statements.join('\n')).not.toMatch(/Replicated|ON CLUSTER|Keeper|\{shard\}|\{replica\}|\{uuid\}/);
    expect(statements[0]).toBe('CREATE TABLE IF NOT EXISTS `lookout`.`schema_migrations` (name String, applied_at DateTime64(3, \'UTC\') DEFAULT now64(3)) ENGINE = ReplacingMergeTree ORDER BY name');
    for (const table of Object.keys(SHARDING_KEYS)) {
      const local = statements.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}_local\`\n`));
      expect([table, local]).toEqual([table, expect.stringMatching(/ENGINE = ReplacingMergeTree\(\w+\)/)]);
      expect(statements).toContain(`CREATE TABLE IF NOT EXISTS \`lookout\`.\`${table}\` AS \`lookout\`.\`${table}_local\`\nENGINE = Distributed(\`lookout_cluster\`, \`lookout\`, \`${table}_local\`, ${SHARDING_KEYS[table]})`);
    }
    // The same statements as the replicated layout, but for ON CLUSTER and the engines' Keeper arguments.
    const replicatedText = renderAll(layout).map((s) => s.replaceAll(' ON CLUSTER `lookout_cluster`', '').replace(/Replicated(\w+MergeTree)\('[^']*', '\{replica\}'(?:, )?/, '$1(').replace(/(\w+MergeTree)\(\)/, '$1'));
    expect(statements.slice(1)).toEqual(replicatedText.slice(1));
    // Only the backfills write through the Distributed tables (run once); everything else runs on every node.
    expect(statements.filter(runsThroughDistributed)).toEqual(statements.filter((s) => s.startsWith('INSERT')));
    expect(statements.filter(runsThroughDistributed)).toHaveLength(25);
  });

  it('leaves the single-node DDL as written', () => {
    const single = renderAll({ database: 'lookout', cluster: null }).join('\n');
    expect(single).not.toMatch(/_local|Distributed|Replicated|ON CLUSTER|\{/);
    expect(single).toContain('CREATE TABLE IF NOT EXISTS `lookout`.spans');
  });

  it('refuses a table without a sharding key and a statement form it cannot place', () => {
    const create = 'CREATE TABLE IF NOT EXISTS {db}.mystery {on_cluster} (trace_id String) ENGINE = {replicated}MergeTree ORDER BY trace_id;';
    expect(() => renderClickHouseMigration(create, layout)).toThrow(/No sharding key for ClickHouse table mystery/);
    expect(() => renderClickHouseMigration('DROP TABLE {db}.spans {on_cluster};', layout)).toThrow(/cannot place on a cluster/);
    expect(renderClickHouseMigration(create, { database: 'lookout', cluster: null })).toHaveLength(1);
  });
});
