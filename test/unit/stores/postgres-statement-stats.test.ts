import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresStatementStats, postgresStatementKind } from '../../../src/platform/postgres/postgres-statement-stats.js';

describe('postgresStatementKind', () => {
  it('names the verb and the first table, or the function a table-less select calls', () => {
    expect(postgresStatementKind('begin')).toBe('begin');
    expect(postgresStatementKind('commit')).toBe('commit');
    expect(postgresStatementKind('\n    insert into issue_occurrences (a, b)\n select * from unnest($1::uuid[])')).toBe('insert issue_occurrences');
    expect(postgresStatementKind('update issues i set x = 1 from unnest($1::uuid[]) as u(id) where i.id = u.id')).toBe('update issues');
    expect(postgresStatementKind('delete from settle_queue where id = $1')).toBe('delete settle_queue');
    expect(postgresStatementKind('select id from unnest($1::uuid[]) v join issues i on i.id = v')).toBe('select issues');
    expect(postgresStatementKind('SELECT id FROM issue_event_outbox WHERE relayed_at IS NULL ORDER BY id FOR NO KEY UPDATE SKIP LOCKED')).toBe('select issue_event_outbox locking');
    expect(postgresStatementKind('select exists (select 1 from issue_event_outbox where relayed_at is null) as left')).toBe('select issue_event_outbox');
    expect(postgresStatementKind("select pg_try_advisory_xact_lock(hashtext('x')) as mine")).toBe('select pg_try_advisory_xact_lock');
    expect(postgresStatementKind('with x as (select 1) insert into t select * from x')).toBe('insert t');
    // A with statement that writes: named by its first write, not by the select that answers.
    expect(postgresStatementKind('with k as (select * from unnest($1::uuid[]) with ordinality as k(tr, i)), up as (insert into stored_traces as s select k.tr from k on conflict (trace_id) do update set n = s.n + 1 returning s.trace_id) select k.i from up join k on up.trace_id = k.tr')).toBe('insert stored_traces');
    expect(postgresStatementKind('with due as (select id from settle_queue for update skip locked), claimed as (update settle_queue q set a = 1 from due returning q.id) select * from claimed')).toBe('update settle_queue locking');
    expect(postgresStatementKind('with locked as (select q.ctid from settle_queue q for update of q), finished as (delete from settle_queue q where q.ctid = any(array(select ctid from locked)) returning q.row_id) select * from finished')).toBe('delete settle_queue locking');
  });

  it('counts statements by kind, begins as transactions, and writes the tally', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pg-stats-')), 'stats.json');
    const stats = new PostgresStatementStats(file);
    for (const text of ['begin', 'select 1 from issues', 'select 1 from issues', 'commit', 'insert into issues values (1)']) stats.count(1, text);
    stats.write();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      kinds: { begin: 1, 'select issues': 2, commit: 1, 'insert issues': 1 },
      statements: 5,
      transactions: 1,
    });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
