/**
 * A deletion job whose process dies mid-job (SIGKILL, no shutdown) is taken over after a restart
 * once its lease lapsed, and finishes: its traces gone from every table, the other trace kept.
 * The job is held mid-way by a settle claim of "another process" on one of its traces (the job waits
 * for settle rounds in flight); that round ends only after the restart.
 */
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../../src/platform/clickhouse/clickhouse.js';
import { embeddedPostgresUrl, openPostgres } from '../../../src/platform/postgres/postgres.js';
import { BOOTSTRAP_KEY, callSpawned as api, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { build, storedRows, traceIdsOf, until, zeros } from './deletion-harness.js';

const dataDir = tempDataDir('lookout-deletion-crash-');
const env = { DELETION_LEASE_MS: '2000', TRACE_SETTLE_MS: '200' };
let child: SpawnedService | null = null;

afterAll(async () => {
  await child?.kill().catch(() => undefined);
  removeDir(dataDir);
});

/** The child's PostgreSQL: DATABASE_URL, or its embedded server. */
function postgresUrl(): string {
  const url = process.env.DATABASE_URL ?? embeddedPostgresUrl(dataDir);
  if (!url) throw new Error('the service has no PostgreSQL running');
  return url;
}

describe('a deletion job across a process crash', () => {
  it('resumes in the restarted process and finishes', async () => {
    child = await spawnService(dataDir, env);
    const project = (await api(child.url, 'POST', '/projects', { name: 'crash' })).body.id as string;
    const runs = build([0, 1, 2].map((i) => ({ start: new Date(Date.now() - 60_000 + i * 1000), agent: 'crash', generations: [{ model: 'gpt-4o', input: 10, output: 2 }], tools: [{ name: 'search', error: i === 0 }] })));
    for (const run of runs) {
      const res = await fetch(`${child.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP_KEY}`, 'x-lookout-project': project }, body: run.body });
      expect(res.status).toBe(200);
    }
    let pg = postgres(postgresUrl(), { max: 1, onnotice: () => {} });
    try {
      await until('traces settled', async () => {
        const listed = await api(child!.url, 'GET', `/projects/${project}/traces`);
        const [{ n }] = await pg<{ n: number }[]>`select count(*)::int as n from settle_queue where project_id = ${project}`;
        return listed.body?.traces?.length === 3 && n === 0;
      });
      const [doomed, other] = [traceIdsOf(project, runs.slice(0, 2)), traceIdsOf(project, runs.slice(2))];
      // A settle round of another process holds the first trace: the job waits for it to end.
      await pg`
        insert into settle_queue (tenant_id, project_id, trace_id, has_root, settle_after, actor, surface, user_id, api_key_id, claim_token, lease_until)
        select tenant_id, id, ${doomed[0]}, true, now() + interval '1 hour', 'system', 'system', '', '', gen_random_uuid(), now() + interval '1 hour'
        from projects where id = ${project}`;
      const created = await api(child.url, 'POST', `/projects/${project}/deletions`, { trace_ids: doomed });
      expect(created.status).toBe(202);
      await until('job running', async () => (await api(child!.url, 'GET', `/deletions/${created.body.id}`)).body.status === 'running');
      const [{ tenant_id: tenantId }] = await pg<{ tenant_id: string }[]>`select tenant_id from projects where id = ${project}`;
      await pg.end({ timeout: 5 });

      // Killed mid-job; the restarted process takes the job over once its lease lapsed, and waits
      // for the other process's round like the first attempt did.
      await child.kill();
      child = null;
      child = await spawnService(dataDir, env);
      pg = postgres(postgresUrl(), { max: 1, onnotice: () => {} });
      const [first] = await pg<{ status: string; traces_deleted: string }[]>`select status, traces_deleted::text from deletion_jobs where id = ${created.body.id}`;
      expect(first).toEqual({ status: 'running', traces_deleted: '0' });
      // The other process's round ends (a finished claim deletes its row).
      await pg`delete from settle_queue where project_id = ${project} and trace_id = ${doomed[0]}`;
      await pg.end({ timeout: 5 });

      const job = await until('job finished after the restart', async () => {
        const res = await api(child!.url, 'GET', `/deletions/${created.body.id}`);
        return res.body?.status === 'succeeded' ? res.body : undefined;
      });
      expect(job.attempts).toBeGreaterThanOrEqual(2);
      expect(job.traces_deleted).toBe(2);
      expect((await api(child.url, 'GET', `/projects/${project}/traces`)).body.traces.map((t: { id: string }) => t.id)).toEqual(other);
      expect(await child.stop()).toBe(0);
      child = null;

      const stores = await openPostgres({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir });
      const ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
      try {
        const gone = await storedRows({ ch, sql: stores.sql }, tenantId, project, doomed);
        expect(gone).toEqual(zeros(gone));
        expect((await storedRows({ ch, sql: stores.sql }, tenantId, project, other)).spans).toBe(3);
      } finally {
        await ch.close();
        await stores.close();
      }
    } finally {
      await pg.end({ timeout: 5 }).catch(() => undefined);
    }
  }, 240_000);
});
