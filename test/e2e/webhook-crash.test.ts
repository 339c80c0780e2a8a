import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { callSpawned as api, removeDir, spawnService, type SpawnedService } from '../helpers/service.js';
import { tempDataDir } from '../helpers/temp-dir.js';
import { verifies } from '../integration/webhooks/harness.js';
import { startReceiver, type Receiver } from '../integration/webhooks/receiver.js';

/**
 * SIGKILL after the issue commit and before delivery, then restart — delivered once.
 *
 * The kill has to land in that window every time, not by luck. The test holds a row lock on the
 * webhook endpoint from its own connection; the fan-out's insert of the delivery references that
 * row, so PostgreSQL makes it wait (a foreign-key check takes KEY SHARE). The issue commits, the
 * fan-out is seen waiting on the lock, and only then is the service killed. Its fan-out never
 * committed; the restarted service finds the event still undispatched in the outbox and delivers it.
 */
const dataDir = tempDataDir('lookout-webhook-crash-');
let child: SpawnedService | null = null;
let receiver: Receiver | null = null;
let watch: postgres.Sql | null = null;

afterAll(async () => {
  await child?.kill().catch(() => undefined);
  await watch?.end({ timeout: 5 });
  await receiver?.close();
  removeDir(dataDir);
});

/** The embedded PostgreSQL outlives a killed service; the test talks to it directly. */
function postmasterUrl(dir: string): string {
  const port = Number(fs.readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://postgres:lookout-embedded@127.0.0.1:${port}/postgres`;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhooks across a process crash', () => {
  it('SIGKILL after the issue commit and before delivery, then restart: delivered once', async () => {
    receiver = await startReceiver();
    const env = { LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1' };
    const harness = { webhookBackoffBaseMs: 50 };
    child = await spawnService(dataDir, env, harness);
    const project = await api(child.url, 'POST', '/projects', { name: 'crash' });
    const webhook = await api(child.url, 'POST', `/projects/${project.body.id}/webhooks`, { url: `${receiver.url}/hook`, events: ['issue.created'] });
    expect(webhook.status).toBe(201);
    const secret: string = webhook.body.secret;

    watch = postgres(postmasterUrl(dataDir), { max: 2, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const holding = watch.begin(async (tx) => {
      await tx`select id from webhook_endpoints where id = ${webhook.body.id} for update`;
      locked();
      await released;
    });
    // The issue is created only once the lock is held: otherwise the fan-out could run (and deliver)
    // before the test's transaction took the row, and never be seen waiting (a flake seen under load).
    await lockHeld;

    const issue = await api(child.url, 'POST', `/projects/${project.body.id}/issues`, { title: 'Crash between commit and delivery' });
    expect(issue.status).toBe(201);
    const [outboxRow] = await watch`select event_id from issue_event_outbox where issue_id = ${issue.body.id} and name = 'issue.created'`;
    expect(outboxRow).toBeDefined();
    // The fan-out is now inside its transaction, waiting for the endpoint row.
    const waitingFanOut = async () =>
      (await watch!`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%insert into webhook_deliveries%'`)[0].n > 0;
    // Generous: on a loaded machine the child's worker can take many seconds to get there.
    await until(waitingFanOut, 'the fan-out to wait on the lock', 120_000);
    expect(receiver.received).toHaveLength(0);

    await child.kill();
    const firstOutput = child.output();
    child = null;
    release();
    await holding;
    // The killed process's fan-out never commits: its backend finds the client gone and rolls back.
    await until(async () => (await watch!`select count(*)::int as n from pg_stat_activity where state like 'idle in transaction%' or wait_event_type = 'Lock'`)[0].n === 0, 'the orphaned transaction to end');
    const [pending] = await watch`select webhooks_dispatched_at from issue_event_outbox where event_id = ${outboxRow.event_id}`;
    expect(pending.webhooks_dispatched_at).toBeNull();
    expect(receiver.received).toHaveLength(0);

    child = await spawnService(dataDir, env, harness);
    const [delivered] = await receiver.waitFor('/hook', 1, 60_000);
    expect(delivered.headers['lookout-event-id']).toBe(outboxRow.event_id);
    expect(delivered.headers['lookout-event-type']).toBe('issue.created');
    expect(verifies(secret, delivered)).toBe(true);
    expect(JSON.parse(delivered.body).data.issue.id).toBe(issue.body.id);
    // Once: nothing else arrives.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(receiver.received).toHaveLength(1);
    const log = await api(child.url, 'GET', `/webhooks/${webhook.body.id}/deliveries`);
    expect(log.body.deliveries).toEqual([expect.objectContaining({ event_id: outboxRow.event_id, attempt: 1, status: 'succeeded', response_status: 200 })]);

    expect(await child.stop()).toBe(0);
    // Neither run logged the secret.
    for (const output of [firstOutput, child.output()]) expect(output.includes(secret)).toBe(false);
    child = null;
  }, 240_000);
});
