/**
 * Search reads little where the query allows it (docs/search.md "How it works"): a word or phrase in
 * few traces is looked up in the text index and only those traces are checked, and a common word is
 * checked among the newest traces only. Counted by the engine (system.events SelectedBytes: the
 * uncompressed bytes of the granules it selected to read; SelectedRows), not timed, so the bounds
 * hold on a loaded machine; the answers are checked too. Before trace_content's granules of 256 rows
 * and the candidates step (clickhouse/017, trace-search.ts) the rare word read 47 % of the text and
 * the common word 55 %; before the summaries' granules of 256 rows and their reads by id without
 * FINAL (clickhouse/019, trace-store.ts), the rare word read 72,189 rows and the common word 19 %.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { parseSearchQuery } from '../../../src/traces/search-query.js';
import { searchTraces } from '../../../src/traces/trace-search.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const TRACES = 60_000;
const scope = { tenantId: 'tenant-a', projectId: 'project-1' };
let store: ClickHouseStore;
/** The content table's text columns, uncompressed: what a search without the index would read. */
let contentBytes = 0;

/** Rows and bytes (uncompressed) the engine selected to read, since the process started. */
async function selected(): Promise<{ rows: number; bytes: number }> {
  const rows = await (await store.client.query({ query: "SELECT event, value FROM system.events WHERE event IN ('SelectedRows', 'SelectedBytes')", format: 'JSONEachRow' })).json<{ event: string; value: string }>();
  const value = (event: string) => Number(rows.find((r) => r.event === event)?.value ?? 0);
  return { rows: value('SelectedRows'), bytes: value('SelectedBytes') };
}

async function search(q: string, limit: number): Promise<{ ids: string[]; rows: number; bytes: number }> {
  const before = await selected();
  const found = await searchTraces(store, scope.tenantId, scope.projectId, { search: parseSearchQuery(q), limit });
  const after = await selected();
  return { ids: found.map((t) => t.trace_id), rows: after.rows - before.rows, bytes: after.bytes - before.bytes };
}

/** Trace n's id, as in the engine below: ids in no relation to time, as real trace ids. */
const id = (n: number) => createHash('md5').update(String(n)).digest('hex');
const WORDS = "['the', 'order', 'refund', 'shipping', 'заказ', '注文', 'delivery']";

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'search_reads_test', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(store, migrationDirs.clickhouse);
  const trace = 'lower(hex(MD5(toString(number))))';
  // Later n, newer trace.
  const timestamp = `toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalSecond(number)`;
  // Summaries as settling writes them, with the list's text columns filled.
  await store.command(raw(`INSERT INTO ${store.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, agent_input_display, tool_calls, stats_tool_calls, models_used, processed_at)
    SELECT '${scope.tenantId}', '${scope.projectId}', ${trace}, ${trace}, ${timestamp}, 'support', substring(repeat(concat('Where is my refund for order ', toString(number), '? '), 20), 1, 500),
      '[]', '[{"name":"lookup_order","status":"ok"}]', ['gpt-4o'], ${timestamp} FROM numbers(${TRACES})`), 'system');
  // Three fields a trace, of words drawn from a few: `the` in nearly every trace, `quasarblue` in
  // 6 traces, the phrase in 30 (`delivery` in nearly every trace), 退货 in 30.
  const text = (salt: number) => `arrayStringConcat(arrayMap(i -> ${WORDS}[1 + cityHash64(number, ${salt}, i) % 7], range(150)), ' ')`;
  const input = `concat(${text(1)}, if(number % 10000 = 7, ' quasarblue', ''), if(number % 2000 = 3, ' a late delivery fee', ''), if(number % 2000 = 5, ' 我想申请退货', ''))`;
  for (const [field, value] of [['input', input], ['output', text(2)], ['tool', `concat('lookup_order ', ${text(3)})`]]) {
    await store.command(raw(`INSERT INTO ${store.table('trace_content')} (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at)
      SELECT '${scope.tenantId}', '${scope.projectId}', ${trace}, '${field}', ${timestamp}, t, t, ${timestamp} FROM (SELECT number, ${value} AS t FROM numbers(${TRACES}))`), 'system');
  }
  await store.command(raw(`OPTIMIZE TABLE ${store.table('trace_content')} FINAL`), 'system');
  const [size] = await (await store.client.query({
    query: `SELECT sum(data_uncompressed_bytes) AS bytes FROM system.columns WHERE database = '${store.database}' AND table = 'trace_content' AND name IN ('text', 'text_norm')`,
    format: 'JSONEachRow',
  })).json<{ bytes: string }>();
  contentBytes = Number(size.bytes);
}, 300_000);

afterAll(async () => {
  await store?.close();
});

const newestFirst = (ns: number[]) => ns.sort((a, b) => b - a).map(id);
const every = (step: number, offset: number) => Array.from({ length: TRACES / step }, (_, i) => i * step + offset);

describe('what a search reads', () => {
  it('reads a few granules for a rare word, a phrase or a Chinese word, found through the text index', async () => {
    for (const [q, expected] of [
      ['quasarblue', newestFirst(every(10_000, 7))],
      ['"late delivery fee"', newestFirst(every(2000, 3))],
      ['退货', newestFirst(every(2000, 5))],
    ] as const) {
      const { ids, bytes, rows } = await search(q, 100);
      expect({ q, ids }).toEqual({ q, ids: expected });
      // A trace's rows are adjacent in granules of a few hundred rows, content and summaries alike:
      // a few granules per matching trace, against a read of every content row. Read by id in
      // granules of 8192 summaries, the summaries alone were 72,000-135,000 rows and the bytes up
      // to 56 MB (a twelfth of the text is 34 MB).
      expect({ q, rows, bytes, under: rows < 40_000 && bytes < contentBytes / 12 }).toEqual({ q, rows, bytes, under: true });
    }
  });

  it('checks only the newest candidates a page needs when the index names more', async () => {
    const { ids, bytes } = await search('"late delivery fee"', 5);
    expect(ids).toEqual(newestFirst(every(2000, 3)).slice(0, 5));
    // The 30 candidates' summaries, newest first, then the text of the newest 5 only: 15.7 MB here
    // (the index look-up's own granules included), where checking the text of all 30 read 21.6 MB.
    expect({ bytes, under: bytes < contentBytes / 22 }).toEqual({ bytes, under: true });
  });

  it('reads the newest traces only for a common word that fills the page', async () => {
    const { ids, bytes } = await search('the', 20);
    expect(ids).toEqual(newestFirst(Array.from({ length: 20 }, (_, i) => TRACES - 1 - i)));
    // The content of the 100 newest traces is most of it (a sixth of the text is 69 MB). Taking the
    // newest traces through FINAL over every summary, then their summaries in granules of 8192,
    // read 80 MB; their time column alone, then their summaries by id in granules of 256, 62 MB.
    expect({ bytes, under: bytes < contentBytes / 6 }).toEqual({ bytes, under: true });
  });
});
