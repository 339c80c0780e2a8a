/**
 * The trace list's agent names (GET /traces/agent-names, trace-store.ts agentNames) name each trace's
 * agent by its newest settled summary: a trace settled again under another agent (a late root span
 * naming it) stops naming the former one at once, before the engine merges the two rows. Each row
 * goes in its own insert (its own part), as settle rounds write them, and merges are stopped, so the
 * older rows are still stored when the names are read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { PREVIEW_PROCESSED_AT } from '../../../src/spans/trace-preview.js';
import { agentNames } from '../../../src/traces/trace-store.js';
import { openTestClickHouse } from '../../helpers/test-clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const TENANT = 'tenant-a';

interface Summary {
  tenant?: string;
  project?: string;
  trace: string;
  agent: string;
  processedAt: string;
  preview?: 1;
}

// In insert order.
const ROWS: Summary[] = [
  // Settled, then settled again under another agent.
  { trace: 'renamed', agent: 'old-agent', processedAt: '2026-11-28 10:00:00.000' },
  { trace: 'renamed', agent: 'new-agent', processedAt: '2026-11-28 10:05:00.000' },
  // Settled again under no agent name at all: it names none now.
  { trace: 'unnamed-later', agent: 'dropped-agent', processedAt: '2026-11-28 10:00:00.000' },
  { trace: 'unnamed-later', agent: '', processedAt: '2026-11-28 10:05:00.000' },
  // Settled once.
  { trace: 'once', agent: 'kept-agent', processedAt: '2026-11-28 10:00:00.000' },
  // A preview, then its summary under another name (the summary landing first is the same read).
  { trace: 'previewed', agent: 'preview-name', processedAt: PREVIEW_PROCESSED_AT, preview: 1 },
  { trace: 'previewed', agent: 'settled-name', processedAt: '2026-11-28 10:00:00.000' },
  { trace: 'settled-first', agent: 'first-settled', processedAt: '2026-11-28 10:00:00.000' },
  { trace: 'settled-first', agent: 'late-preview', processedAt: PREVIEW_PROCESSED_AT, preview: 1 },
  // Only a preview: not settled, not named yet.
  { trace: 'settling', agent: 'unsettled-agent', processedAt: PREVIEW_PROCESSED_AT, preview: 1 },
  // Another project of the tenant, and another tenant using the same trace id.
  { project: 'p2', trace: 'elsewhere', agent: 'p2-agent', processedAt: '2026-11-28 10:00:00.000' },
  { tenant: 'tenant-b', trace: 'renamed', agent: 'other-tenant-agent', processedAt: '2026-11-28 11:00:00.000' },
];

let store: ClickHouseStore;

beforeAll(async () => {
  store = await openTestClickHouse({ database: 'agent_names_test', dataDir: tempDataDir() });
  await migrateClickHouse(store, migrationDirs.clickhouse);
  await store.command(raw(`SYSTEM STOP MERGES ${store.table('traces')}`), 'system');
  for (const r of ROWS) {
    await store.insert(store.table('traces'), [{
      tenant_id: r.tenant ?? TENANT, project_id: r.project ?? 'p1', trace_id: r.trace, timestamp: '2026-11-28 09:59:00.000',
      agent_name: r.agent, preview: r.preview ?? 0, processed_at: r.processedAt,
    }], 'ingest');
  }
});

afterAll(async () => {
  await store?.close();
});

describe('agent names', () => {
  it('the test data holds the older summaries in parts of their own (the checks below could fail)', async () => {
    const scope = { tenantId: TENANT, projectId: 'p1' };
    const [parts] = await store.read<{ parts: number | string; stale: number | string }>(
      sql`SELECT uniqExact(_part) AS parts, countIf(agent_name IN ('old-agent', 'dropped-agent')) AS stale FROM ${scopedTable(store.table('traces'))} WHERE ${tenantGuard(scope)}`,
      { lane: 'analytics', scope },
    );
    expect(Number(parts.parts)).toBeGreaterThanOrEqual(9);
    expect(Number(parts.stale)).toBe(2);
  });

  it("name each settled trace's agent by its newest summary, before any merge", async () => {
    expect(await agentNames(store, { tenantId: TENANT, projectId: 'p1' })).toEqual(['first-settled', 'kept-agent', 'new-agent', 'settled-name']);
  });

  it('cover the tenant without a project, and never another tenant', async () => {
    expect(await agentNames(store, { tenantId: TENANT, projectId: null })).toEqual(['first-settled', 'kept-agent', 'new-agent', 'p2-agent', 'settled-name']);
    expect(await agentNames(store, { tenantId: 'tenant-b', projectId: null })).toEqual(['other-tenant-agent']);
  });
});
