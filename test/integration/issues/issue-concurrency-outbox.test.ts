import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { eventIssueRow, type OutboxRow } from '../../../src/workspace/issues/issue-event-outbox.js';
import { issueEvents, newIssue, pendingOutboxCount, relayOf, settledIssueEvents, userWithKey } from './issue-test-helpers.js';

let svc: TestService;
let projectId: string;

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('concurrency')).id;
});
afterAll(async () => {
  await svc?.stop();
});

describe('start-review under concurrency', () => {
  it('20 users starting a review at once: exactly one assignee and one issue.review_started', async () => {
    const users = await Promise.all(Array.from({ length: 20 }, (_, i) => userWithKey(svc, `reviewer ${i}`)));
    const issue = await newIssue(svc, projectId);
    const answers = await Promise.all(users.map((u) => svc.call('PATCH', `/issues/${issue.id}/start-review`, { key: u.key })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const assignees = new Set(answers.map((a) => a.body.assignee_user_id));
    expect(assignees.size).toBe(1);
    const [assignee] = assignees;
    expect(users.map((u) => u.userId)).toContain(assignee);
    for (const a of answers) expect(a.body).toEqual({ project_id: projectId, status: 'in_progress', assignee_user_id: assignee });
    expect((await svc.call('GET', `/issues/${issue.id}`)).body).toMatchObject({ status: 'in_progress', assignee_user_id: assignee });

    const events = await settledIssueEvents(svc, [issue.id]);
    const started = events.filter((e) => e.name === 'issue.review_started');
    expect(started).toHaveLength(1);
    // The event names the user who won the race.
    expect(started[0].user_id).toBe(assignee);
    // Counted without FINAL too: the relay inserted it once.
    expect((await issueEvents(svc, [issue.id], { final: false })).filter((e) => e.name === 'issue.review_started')).toHaveLength(1);
  });

  it('concurrent resolve and dismiss: one wins, the other is a terminal conflict, one event', async () => {
    const issue = await newIssue(svc, projectId);
    const [a, b] = await Promise.all([
      svc.call('PATCH', `/issues/${issue.id}/resolve`),
      svc.call('PATCH', `/issues/${issue.id}/dismiss`),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const events = await settledIssueEvents(svc, [issue.id]);
    expect(events.map((e) => e.name).filter((n) => n !== 'issue.created')).toHaveLength(1);
  });
});

describe('transactional outbox', () => {
  it('keeps events while the relay is stopped and delivers each exactly once after restart', async () => {
    const relay = relayOf(svc);
    await relay.drain();
    await relay.stop();
    try {
      const issues = [];
      for (let i = 0; i < 5; i++) issues.push(await newIssue(svc, projectId, { title: `outbox ${i}` }));
      const ids = issues.map((i) => i.id);
      for (const id of ids) {
        await svc.call('PATCH', `/issues/${id}/start-review`);
        await svc.call('PATCH', `/issues/${id}/flag`);
        await svc.call('POST', `/issues/${id}/chat`, { body: { message: 'note' } });
        await svc.call('PATCH', `/issues/${id}/resolve`);
      }
      // Nothing reached ClickHouse while the relay was stopped; everything waits in PostgreSQL.
      expect(await issueEvents(svc, ids)).toEqual([]);
      expect(await pendingOutboxCount(svc)).toBe(25);
      relay.start();
      const deadline = Date.now() + 20_000;
      while ((await pendingOutboxCount(svc)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await pendingOutboxCount(svc)).toBe(0);
      for (const final of [true, false]) {
        const events = await issueEvents(svc, ids, { final });
        expect(events).toHaveLength(25);
        expect(new Set(events.map((e) => e.event_id)).size).toBe(25);
        for (const id of ids) {
          expect(events.filter((e) => e.issue_id === id).map((e) => e.name).sort()).toEqual([
            'issue.chat_sent', 'issue.created', 'issue.flagged', 'issue.resolved', 'issue.review_started',
          ]);
        }
      }
    } finally {
      relay.start();
    }
  });

  it('a crash after the ClickHouse insert but before the commit re-relays the same rows, counted once', async () => {
    const relay = relayOf(svc);
    await relay.drain();
    await relay.stop();
    try {
      const issue = await newIssue(svc, projectId, { title: 'crash window' });
      await svc.call('PATCH', `/issues/${issue.id}/resolve`);
      // Do what a relay does up to the moment it dies: insert the pending rows into ClickHouse, never mark them.
      const sql = svc.service.deps.sql;
      const pending = await sql<OutboxRow[]>`
        select id::text as id, event_id, tenant_id, project_id, issue_id, name, occurred_at, actor, surface, user_id, api_key_id, created_at
        from issue_event_outbox where relayed_at is null and issue_id = ${issue.id}`;
      expect(pending).toHaveLength(2);
      const ch = svc.service.deps.ch;
      // No background merge may fold the duplicates before the raw read below (it did, now and then, under load).
      await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('event_issue')}` });
      await ch.client.insert({ table: ch.table('event_issue'), values: pending.map(eventIssueRow), format: 'JSONEachRow' });
      // The restarted relay sends them again.
      expect(await relay.drain()).toBeGreaterThanOrEqual(2);
      expect(await pendingOutboxCount(svc)).toBe(0);
      const raw = await issueEvents(svc, [issue.id], { final: false });
      expect(raw).toHaveLength(4);
      const final = await issueEvents(svc, [issue.id]);
      expect(final.map((e) => e.name).sort()).toEqual(['issue.created', 'issue.resolved']);
      // After a merge the duplicates are gone from storage as well, not only from FINAL reads.
      await ch.client.command({ query: `SYSTEM START MERGES ${ch.table('event_issue')}` });
      await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table('event_issue')} FINAL` });
      expect(await issueEvents(svc, [issue.id], { final: false })).toHaveLength(2);
    } finally {
      await svc.service.deps.ch.client.command({ query: `SYSTEM START MERGES ${svc.service.deps.ch.table('event_issue')}` });
      relay.start();
    }
  });

  it('a change that fails rolls back its event with it', async () => {
    const issue = await newIssue(svc, projectId);
    await svc.call('PATCH', `/issues/${issue.id}/resolve`);
    const before = await pendingOutboxCount(svc);
    const refused = await svc.call('PATCH', `/issues/${issue.id}/dismiss`);
    expect(refused.status).toBe(409);
    // PATCH with flagged and an unknown assignee fails validation before anything is written.
    const bad = await svc.call('PATCH', `/issues/${issue.id}`, { body: { flagged: true, assignee_user_id: '00000000-0000-4000-8000-000000000000' } });
    expect(bad.status).toBe(400);
    expect(await pendingOutboxCount(svc)).toBeLessThanOrEqual(before);
    const events = await settledIssueEvents(svc, [issue.id]);
    expect(events.map((e) => e.name).sort()).toEqual(['issue.created', 'issue.resolved']);
  });
});
