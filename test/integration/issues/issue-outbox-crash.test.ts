import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { callSpawned as api, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { openClickHouse } from '../../../src/platform/clickhouse/clickhouse.js';
import { openPostgres } from '../../../src/platform/postgres/postgres.js';

const dataDir = tempDataDir('lookout-outbox-crash-');
let child: SpawnedService | null = null;

afterAll(async () => {
  await child?.kill().catch(() => undefined);
  removeDir(dataDir);
});

function postmasterUrl(dir: string): string {
  const port = Number(fs.readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://postgres:lookout-embedded@127.0.0.1:${port}/postgres`;
}

async function pendingVia(dir: string): Promise<number> {
  const watch = postgres(postmasterUrl(dir), { max: 1, onnotice: () => {} });
  try {
    const [{ pending }] = await watch<{ pending: number }[]>`select count(*)::int as pending from issue_event_outbox where relayed_at is null`;
    return pending;
  } finally {
    await watch.end({ timeout: 5 });
  }
}

describe('outbox across a process crash', () => {
  it('SIGKILL right after committed changes: after restart every issue event is in ClickHouse exactly once', async () => {
    child = await spawnService(dataDir);
    const project = await api(child.url, 'POST', '/projects', { name: 'crash' });
    const created = await Promise.all(Array.from({ length: 10 }, (_, i) => api(child!.url, 'POST', `/projects/${project.body.id}/issues`, { title: `crash ${i}` })));
    const ids: string[] = created.map((c) => c.body.id);
    const changes = await Promise.all(ids.flatMap((id) => [
      api(child!.url, 'PATCH', `/issues/${id}/flag`),
      api(child!.url, 'POST', `/issues/${id}/chat`, { message: 'x' }),
    ]));
    expect(changes.map((c) => c.status).sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(201)]);
    // Die without any shutdown: whatever the relay had not delivered is only in PostgreSQL now.
    await child.kill();
    child = null;
    // The dead process usually leaves some of the 30 events committed but undelivered (12 in one
    // measured run); the postmaster outlives it, so the restart below finds them.

    child = await spawnService(dataDir);
    // The restarted relay drains the outbox; watch it through the child's PostgreSQL (a separate
    // server process), without stopping it.
    const deadline = Date.now() + 30_000;
    let pending = await pendingVia(dataDir);
    while (pending !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      pending = await pendingVia(dataDir);
    }
    expect(pending).toBe(0);
    // Release both stores to this process; a clean shutdown exits 0 even with an adopted postmaster.
    expect(await child.stop()).toBe(0);
    child = null;

    const pg = await openPostgres({ databaseUrl: null, dataDir });
    const ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
    try {
      const [{ pending }] = await pg.sql<{ pending: number }[]>`select count(*)::int as pending from issue_event_outbox where relayed_at is null`;
      expect(pending).toBe(0);
      const result = await ch.client.query({
        query: `SELECT name, count() AS n, uniqExact(event_id) AS events FROM ${ch.table('event_issue')} FINAL
                WHERE issue_id IN {ids:Array(String)} GROUP BY name ORDER BY name`,
        query_params: { ids },
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      });
      expect(await result.json()).toEqual([
        { name: 'issue.chat_sent', n: 10, events: 10 },
        { name: 'issue.created', n: 10, events: 10 },
        { name: 'issue.flagged', n: 10, events: 10 },
      ]);
    } finally {
      await ch.close();
      await pg.close();
    }
  }, 180_000);
});
