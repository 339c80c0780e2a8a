/**
 * Trace search is exact (docs/search.md): the word index of trace_content only narrows what
 * ClickHouse reads, the LIKE decides. Checked against a brute-force scan over the raw texts, for
 * random content in many scripts (Latin with accents and ligatures, Greek final sigma, Turkish dotted
 * I, Japanese with half-width kana, Chinese, Korean decomposed or not, Arabic, Cyrillic, emoji, LIKE
 * wildcards, markup) and random queries of words, phrases, exclusions and fields: no false positive,
 * no false negative. The data sits in many parts (one per insert, merges stopped), with older
 * settlings of some traces (other text, maybe another time, summary and content) beside the newest,
 * traces at a few distinct times, and a second tenant holds the same trace ids with other text. Failures print the seed; SEARCH_SEED=<n> replays one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { displayText, lowerPerCodePoint, searchForm } from '../../../src/spans/search-text.js';
import { CONTENT_FIELDS, type ContentField } from '../../../src/spans/trace-content.js';
import { parseSearchQuery, type SearchQuery } from '../../../src/traces/search-query.js';
import { searchTraces } from '../../../src/traces/trace-search.js';
import { listTraces } from '../../../src/traces/trace-store.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const SEED = Number(process.env.SEARCH_SEED ?? Date.now() % 1_000_000);
const TRACES = 240;
const QUERIES = 200;

const random = seededRandom(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
const chance = (p: number) => random() < p;

const VOCABULARY = [
  'Refund', 'ORDER', 'shipping', 'policy', 'naïve', 'café', 'Crème', 'ﬁnance', 'ＡＢＣ', 'İstanbul', 'ılık', 'ΟΔΟΣ', 'Σοφία',
  '返金', '注文', 'タイムアウト', 'ｶﾀｶﾅ', 'ありがとう', '退款', '申请', '订单', '物流', '환불', '요청', '주문', '배송',
  'مرحبا', 'استرداد', 'طلب', 'شكرا', 'Привет', 'ЗАКАЗ', 'возврат', 'доставка', 'Ёлка', '100%', 'a_b', 'back\\slash',
  '<tag>', '😀', 'x', 'é', 'order_id', 'Ǆemal',
];
const SEPARATORS = [' ', ' ', ' ', '\n', '\t', '  ', '', ', ', '\u00a0', '\u3000'];

function variant(word: string): string {
  const r = random();
  const cased = r < 0.2 ? word.toUpperCase() : r < 0.4 ? word.toLowerCase() : word;
  return chance(0.2) ? cased.normalize('NFD') : cased;
}

function randomText(): string {
  const n = 1 + Math.floor(random() * 10);
  let out = '';
  for (let i = 0; i < n; i++) out += (i > 0 ? pick(SEPARATORS) : '') + variant(pick(VOCABULARY));
  return out;
}

type TraceTexts = Partial<Record<ContentField, string[]>>;

function randomTrace(): TraceTexts {
  const out: TraceTexts = {};
  for (const field of CONTENT_FIELDS) {
    if (chance(0.5)) out[field] = Array.from({ length: 1 + Math.floor(random() * 3) }, randomText);
  }
  return out;
}

/** The rows settling writes for these texts (trace-content.ts's layout: a row per field, items joined by a line feed). */
function rows(tenantId: string, projectId: string, traceId: string, texts: TraceTexts, processedAt: string, timestamp: string) {
  return CONTENT_FIELDS.flatMap((field) => {
    const items = (texts[field] ?? []).map(displayText).filter((t) => t !== '');
    const text = [...new Set(items)].join('\n');
    return [{ tenant_id: tenantId, project_id: projectId, trace_id: traceId, field, timestamp, text, text_norm: lowerPerCodePoint(text), processed_at: processedAt }];
  });
}

/** Brute force over the raw texts: each positive term in some item (of its field), no negated one in any. */
function bruteForce(traces: Map<string, TraceTexts>, query: SearchQuery): string[] {
  const ids: string[] = [];
  for (const [id, texts] of traces) {
    const holds = (term: SearchQuery['terms'][number]) =>
      CONTENT_FIELDS.some((f) => (term.field === null || term.field === f) && (texts[f] ?? []).some((item) => searchForm(item).includes(term.text)));
    if (query.terms.every((t) => holds(t) !== t.negated)) ids.push(id);
  }
  return ids.sort();
}

/** A random query: pieces of stored texts (so many hit) and vocabulary words, some quoted, negated or in a field. */
function randomQuery(texts: TraceTexts[]): string | null {
  const terms: string[] = [];
  const n = 1 + Math.floor(random() * 3);
  for (let i = 0; i < n; i++) {
    let word: string;
    if (chance(0.6)) {
      const fieldTexts = Object.values(pick(texts)).flat();
      if (fieldTexts.length === 0) continue;
      const chars = [...pick(fieldTexts)];
      const start = Math.floor(random() * chars.length);
      word = chars.slice(start, start + 2 + Math.floor(random() * 6)).join('');
    } else {
      word = variant(pick(VOCABULARY));
    }
    if (word.includes('"')) continue;
    const quoted = /\s/.test(word) || chance(0.2) ? `"${word}"` : word;
    const field = chance(0.3) ? `${pick(CONTENT_FIELDS)}:` : '';
    terms.push(`${i > 0 && chance(0.25) ? '-' : ''}${field}${quoted}`);
  }
  return terms.length > 0 ? terms.join(' ') : null;
}

let store: ClickHouseStore;
const A = { tenantId: 'tenant-a', projectId: 'project-1' };
const B = { tenantId: 'tenant-b', projectId: 'project-1' };
/** Tenant A's newest texts per trace: what a search must answer from. */
const current = new Map<string, TraceTexts>();
/** Tenant A's newest time per trace: the list's order. */
const times = new Map<string, string>();

function summary(scope: typeof A, id: string, timestamp: string, processedAt: string) {
  return { tenant_id: scope.tenantId, project_id: scope.projectId, trace_id: id, otel_trace_id: id, timestamp, tool_calls: '[]', models_used: [], processed_at: processedAt };
}

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'search_exact_test', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(store, migrationDirs.clickhouse);
  await store.command(raw(`SYSTEM STOP MERGES ${store.table('trace_content')}`), 'system');
  await store.command(raw(`SYSTEM STOP MERGES ${store.table('traces')}`), 'system');
  // A few distinct times, so traces tie on time and the newest-first order and the search's slices
  // of the newest traces (trace-search.ts) cut between and within them.
  const time = () => `2026-11-20 10:0${Math.floor(random() * 8)}:00.000`;
  for (let part = 0; part < 12; part++) {
    const lines: unknown[] = [];
    const traceRows = [];
    for (let i = part; i < TRACES; i += 12) {
      const id = `trace-${String(i).padStart(4, '0')}`;
      const texts = randomTrace();
      const timestamp = time();
      // An older settling with other text and maybe another time, in an earlier part: only the
      // newest summary and content rows count.
      if (chance(0.2)) {
        const older = time();
        await store.insert(store.table('trace_content'), rows(A.tenantId, A.projectId, id, randomTrace(), '2026-11-20 11:00:01.000', older), 'system');
        await store.insert(store.table('traces'), [summary(A, id, older, '2026-11-20 11:00:01.000')], 'system');
      }
      current.set(id, texts);
      times.set(id, timestamp);
      lines.push(...rows(A.tenantId, A.projectId, id, texts, '2026-11-20 11:00:02.000', timestamp));
      // The same trace id in another tenant, with other text.
      lines.push(...rows(B.tenantId, B.projectId, id, randomTrace(), '2026-11-20 11:00:02.000', timestamp));
      traceRows.push(summary(A, id, timestamp, '2026-11-20 11:00:02.000'));
    }
    await store.insert(store.table('trace_content'), lines as object[], 'system');
    await store.insert(store.table('traces'), traceRows, 'system');
  }
}, 120_000);

afterAll(async () => {
  await store?.close();
});

describe('trace search against a brute-force scan', () => {
  it(`answers exactly the traces whose text holds the query (seed ${SEED})`, async () => {
    const texts = [...current.values()];
    let ran = 0;
    let nonEmpty = 0;
    for (let i = 0; i < QUERIES; i++) {
      const q = randomQuery(texts);
      if (q === null) continue;
      let query: SearchQuery;
      try {
        query = parseSearchQuery(q);
      } catch {
        continue; // a word under two characters, or only exclusions: a 400, tested elsewhere
      }
      const got = (await listTraces(store, A.tenantId, A.projectId, { search: query, limit: 10_000 })).map((r) => r.trace_id).sort();
      const expected = bruteForce(current, query);
      expect({ seed: SEED, q, got }).toEqual({ seed: SEED, q, got: expected });
      // The stepped page (candidates, slices of the newest, then the rest) is the first rows of the
      // same answer, and the page after it the next ones.
      if (i % 3 === 0) {
        const limit = 1 + Math.floor(random() * 12);
        // Candidates capped anywhere from none (always the probes, then the rest) to all traces; one
        // probe, or two (the second past the first 100 traces).
        const probe = pick([1 + Math.floor(random() * 60), 101 + Math.floor(random() * 100)]);
        const cap = pick([0, 1 + Math.floor(random() * 30), TRACES]);
        const newestFirst = (a: string, b: string) => (times.get(a) === times.get(b) ? (a < b ? 1 : -1) : times.get(a)! < times.get(b)! ? 1 : -1);
        const ordered = expected.slice().sort(newestFirst);
        const first = await searchTraces(store, A.tenantId, A.projectId, { search: query, limit }, probe, cap);
        expect({ seed: SEED, q, limit, paged: first.map((r) => r.trace_id) }).toEqual({ seed: SEED, q, limit, paged: ordered.slice(0, limit) });
        if (first.length === limit) {
          const last = first[limit - 1];
          const next = await searchTraces(store, A.tenantId, A.projectId, { search: query, limit, before: { timestamp: last.ts, traceId: last.trace_id } }, probe, cap);
          expect({ seed: SEED, q, limit, next: next.map((r) => r.trace_id) }).toEqual({ seed: SEED, q, limit, next: ordered.slice(limit, 2 * limit) });
        }
      }
      ran++;
      if (expected.length > 0) nonEmpty++;
    }
    // The generator must exercise both answers: many queries that hit, and some that do not.
    expect(ran).toBeGreaterThan(QUERIES / 2);
    expect(nonEmpty).toBeGreaterThan(ran / 4);
    expect(nonEmpty).toBeLessThan(ran);
  }, 300_000);
});
