/**
 * The per-span event tables are partitioned by day (clickhouse/010), and ClickHouse refuses an insert
 * block that touches more than `max_partitions_per_insert_block` (100) partitions. Ingestion accepts
 * spans from 90 days back to INGEST_MAX_FUTURE_SKEW_MS ahead, so one request — one flush — can hold
 * spans of more days than that; it must be stored whole, not refused (and retried for ever).
 * Real stores, through the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const DAY_MS = 86_400_000;
const DAYS = 150;

let svc: TestService;
let dataDir: string;
let projectId: string;

beforeAll(async () => {
  dataDir = tempDataDir('lookout-many-days-');
  svc = await startTestService({ INGEST_MAX_FUTURE_SKEW_MS: String(70 * DAY_MS) }, dataDir);
  projectId = (await svc.newProject('many-days')).id;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

describe('one request with spans on 150 different days', () => {
  it('is stored whole: a generation row on every day, one day partition each', async () => {
    // One run a day, from 85 days back to 64 days ahead, all in one request (one flush).
    const first = Date.now() - 85 * DAY_MS;
    const runs = Array.from({ length: DAYS }, (_, day) =>
      JSON.parse(agentRunRequest({ start: new Date(first + day * DAY_MS), agent: 'daily', generations: [{ model: 'm-daily', input: 3, output: 2 }] }).body),
    );
    const body = JSON.stringify({ resourceSpans: runs.flatMap((r) => r.resourceSpans) });
    const res = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': projectId },
      body,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});

    const ch = svc.service.deps.ch;
    const [stored] = await (await ch.client.query({
      query: `SELECT count() AS n, uniqExact(toDate(timestamp)) AS days, uniqExact(_partition_id) AS partitions
        FROM ${ch.table('event_generation_completed')} WHERE project_id = {p:String}`,
      query_params: { p: projectId },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    })).json<{ n: number; days: number; partitions: number }>();
    expect(stored).toEqual({ n: DAYS, days: DAYS, partitions: DAYS });
  }, 60_000);
});
