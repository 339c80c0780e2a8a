import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import type { Sql } from '../../../src/platform/postgres/postgres.js';
import { extractIssueGroup, readExtraction } from '../../../src/workspace/issues/issue-extraction.js';
import { attachToIssues } from '../../../src/workspace/issues/issue-open.js';
import { fingerprintOf } from '../../../src/workspace/issues/issue-fingerprint.js';

/**
 * Two versions of one trace extracted at once by different groups (or processes), attaching to
 * different issues so no issue lock orders them: each writes the trace's extraction record with
 * the occurrences its own snapshot saw, and the later write can miss the other's. The record a
 * trace shows counts its occurrences as they are, whatever order the writes came in.
 */
let svc: TestService;
let tenantId: string;

const pool = (): Sql => svc.postgresPool({ max: 2 });

beforeAll(async () => {
  svc = await startTestService();
  tenantId = svc.service.bootstrap!.tenantId;
});
afterAll(async () => {
  await svc?.stop();
});

function failingTrace(projectId: string, traceId: string, spanId: string, tool: string): ProcessedTrace {
  const at = new Date().toISOString();
  return {
    tenantId, projectId, traceId, otelTraceId: traceId.replace(/-/g, ''), timestamp: at, agentName: 'support',
    hasError: true, toolCalls: [], agentInput: null, agentOutput: null, spanAttributes: {},
    failures: [{ span_id: spanId, span_name: `execute_tool ${tool}`, tool_name: tool, error_type: 'TimeoutError', message: `${tool} timed out`, timestamp: at }],
  };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the extraction record of a trace extracted twice at once', () => {
  it('counts every occurrence of the trace, not the last writer’s snapshot', async () => {
    const projectId = (await svc.newProject('record race')).id;
    const traceId = crypto.randomUUID();
    const late = failingTrace(projectId, traceId, 'b'.repeat(16), 'refund');
    const early = failingTrace(projectId, traceId, 'a'.repeat(16), 'search');
    const [writer, other] = [pool(), pool()];
    // The later version attaches its failure and writes the record, then holds its transaction open.
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let written!: () => void;
    const recordWritten = new Promise<void>((r) => (written = r));
    const lateDone = writer.begin(async (tx) => {
      await attachToIssues(tx, [{
        tenantId, projectId, fingerprint: fingerprintOf(late.failures[0]), title: 'TimeoutError in tool refund', description: null,
        traceId, otelTraceId: late.otelTraceId,
        occurrences: [{ spanId: late.failures[0].span_id, occurredAt: new Date(), errorType: 'TimeoutError', spanName: 'execute_tool refund', toolName: 'refund', message: '' }],
      }]);
      await tx`
        insert into trace_issue_extractions (tenant_id, project_id, trace_id, status, reason, issue_count, occurrence_count, completed_at)
        values (${tenantId}, ${projectId}, ${traceId}, 'completed', 'failures_attached', 1, 1, now())
        on conflict (tenant_id, project_id, trace_id) do update set issue_count = excluded.issue_count, occurrence_count = excluded.occurrence_count`;
      written();
      await held;
    });
    await recordWritten;
    // The earlier version counts before that commits, and its record write waits for that row.
    const earlyDone = extractIssueGroup(other, [early]);
    await until(
      async () => (await svc.service.deps.sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%trace_issue_extractions%'`)[0].n > 0,
      'the record write to wait',
    );
    commit();
    await lateDone;
    await earlyDone;

    const [{ n }] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from issue_occurrences where trace_id = ${traceId}`;
    expect(n).toBe(2);
    expect(await readExtraction(svc.service.deps.sql, tenantId, projectId, traceId)).toMatchObject({
      status: 'completed', reason: 'failures_attached', issue_count: 2, occurrence_count: 2,
    });
  });
});
