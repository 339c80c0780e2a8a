import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { claimDue, finishClaims, recordTraces } from '../../../src/ingest/settle/settle-queue.js';
import { migrationDirs } from '../../../src/app/service.js';
import { migratePostgres, readMigrations } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { removeDir } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * Migration 023 (sql/023_settle_queue_uuid_keys.sql) on a settle queue left by 022 with rows in it:
 * UUID keys kept with everything they carried, a key that is not a UUID gone, spellings of one key in
 * another letter case folded to one row (the lower-case one when there is one, else the oldest), and
 * the kept rows settle as before.
 */

const dataDir = tempDataDir('lookout-queue-023-');
const previousDir = tempDataDir('lookout-pg-migrations-');
let pg: PostgresStore;
beforeAll(async () => {
  pg = await openPostgres({ databaseUrl: null, dataDir });
  for (const file of readMigrations(migrationDirs.postgres).filter((f) => f.name < '023')) fs.writeFileSync(path.join(previousDir, file.name), file.text);
  await migratePostgres(pg.sql, previousDir);
}, 120_000);
afterAll(async () => {
  await pg?.close();
  removeDir(dataDir);
  fs.rmSync(previousDir, { recursive: true, force: true });
});

describe('migration 023 on a settle queue with rows', () => {
  it('keeps UUID keys with their state, drops foreign ones, folds spellings, and the rows settle', async () => {
    const [tenant, project] = [crypto.randomUUID(), crypto.randomUUID()];
    const [plain, folded, shouted, twice] = Array.from({ length: 4 }, () => crypto.randomUUID());
    const insert = (tenantId: string, projectId: string, traceId: string, apiKey: string) => pg.sql`
      insert into settle_queue (tenant_id, project_id, trace_id, has_root, settle_after, actor, surface, user_id, api_key_id, seq)
      values (${tenantId}, ${projectId}, ${traceId}, true, now() - interval '1 second', 'sdk', 'otlp', 'u1', ${apiKey}, 3)`;
    await insert(tenant, project, plain, 'plain');
    // An upper-case spelling written before the lower-case one: the lower-case row stays.
    await insert(tenant, project.toUpperCase(), folded, 'folded-upper');
    await insert(tenant, project, folded, 'folded-lower');
    // Only upper-case spellings: the oldest stays, as a lower-case uuid key.
    await insert(tenant.toUpperCase(), project, shouted, 'shouted');
    await insert(tenant, project.toUpperCase(), twice, 'twice-older');
    await insert(tenant.toUpperCase(), project.toUpperCase(), twice, 'twice-newer');
    await insert('foreign-tenant', project, crypto.randomUUID(), 'foreign');

    expect(await migratePostgres(pg.sql, migrationDirs.postgres)).toEqual(readMigrations(migrationDirs.postgres).filter((f) => f.name >= '023').map((f) => f.name));
    expect(await migratePostgres(pg.sql, migrationDirs.postgres)).toEqual([]);
    const columns = await pg.sql<{ column_name: string; data_type: string }[]>`
      select column_name, data_type from information_schema.columns
      where table_name = 'settle_queue' and column_name in ('tenant_id', 'project_id', 'trace_id', 'claimed_seq') order by column_name`;
    expect(columns).toEqual([
      { column_name: 'claimed_seq', data_type: 'bigint' },
      { column_name: 'project_id', data_type: 'uuid' },
      { column_name: 'tenant_id', data_type: 'uuid' },
      { column_name: 'trace_id', data_type: 'uuid' },
    ]);
    const rows = await pg.sql<{ tenant_id: string; project_id: string; trace_id: string; api_key_id: string; seq: string }[]>`
      select tenant_id, project_id, trace_id, api_key_id, seq::text from settle_queue order by api_key_id`;
    expect(rows).toEqual([
      { tenant_id: tenant, project_id: project, trace_id: folded, api_key_id: 'folded-lower', seq: '3' },
      { tenant_id: tenant, project_id: project, trace_id: plain, api_key_id: 'plain', seq: '3' },
      { tenant_id: tenant, project_id: project, trace_id: shouted, api_key_id: 'shouted', seq: '3' },
      { tenant_id: tenant, project_id: project, trace_id: twice, api_key_id: 'twice-older', seq: '3' },
    ]);

    // A flush upserts a kept row (seq moves on); a round claims and finishes every row.
    const [again] = await recordTraces(pg.sql, [{ tenantId: tenant, projectId: project, traceId: plain, hasRoot: true, origin: { actor: 'sdk', surface: 'otlp', user_id: 'u1', api_key_id: 'plain' } }], { settleMs: 0, maxWaitMs: 60_000 });
    expect(again.seq).toBe('4');
    const token = crypto.randomUUID();
    const round = await claimDue(pg.sql, { token, limit: 10, leaseMs: 60_000 });
    expect(round.claims.map((c) => c.traceId).sort()).toEqual([plain, folded, shouted, twice].sort());
    expect((await finishClaims(pg.sql, token, round.claims)).map((k) => k.traceId).sort()).toEqual([plain, folded, shouted, twice].sort());
    expect(await pg.sql`select 1 from settle_queue`).toHaveLength(0);
  });
});
