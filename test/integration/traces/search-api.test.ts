/**
 * Trace search through the real service (docs/search.md): spans sent over OTLP/HTTP (and a GenAI
 * log event over /v1/logs), settled, then found by GET /projects/{id}/traces?q= in many scripts,
 * per field, with phrases and exclusions, combined with the list's filters and paging; two tenants
 * share every word and each finds only its own.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitFor } from '../ingest/otlp-client.js';

let svc: TestService;
const tenants: { tenantId: string; adminKey: string; projectId: string; ids: Record<string, string> }[] = [];
const baseNs = BigInt(Date.now() - 120_000) * 1_000_000n;

type Attr = { key: string; value: { stringValue: string } };
const s = (key: string, value: string): Attr => ({ key, value: { stringValue: value } });

interface SpanSpec {
  name: string;
  attributes?: Attr[];
  error?: { type: string; message: string };
}

/** One trace: a root span with the given attributes and child spans, started `offset` seconds after the base. */
function traceSpans(otelTraceId: string, offset: number, root: SpanSpec, children: SpanSpec[] = []) {
  const start = baseNs + BigInt(offset) * 1_000_000_000n;
  const span = (spec: SpanSpec, i: number) => ({
    traceId: otelTraceId,
    spanId: (i + 1).toString(16).padStart(16, '0'),
    ...(i > 0 ? { parentSpanId: '0000000000000001' } : {}),
    name: spec.name,
    kind: 1,
    startTimeUnixNano: (start + BigInt(i) * 1000n).toString(),
    endTimeUnixNano: (start + 5_000_000n).toString(),
    attributes: spec.attributes ?? [],
    events: spec.error ? [{ timeUnixNano: start.toString(), name: 'exception', attributes: [s('exception.type', spec.error.type), s('exception.message', spec.error.message)] }] : [],
    status: spec.error ? { code: 2, message: spec.error.message } : {},
  });
  return [root, ...children].map(span);
}

/** The same five traces in every tenant: every tenant shares every word. */
function corpus(): { key: string; spans: (id: string) => ReturnType<typeof traceSpans> }[] {
  return [
    {
      key: 'refund',
      spans: (id) =>
        traceSpans(id, 1, { name: 'invoke_agent support', attributes: [s('gen_ai.agent.name', 'support'), s('gen_ai.operation.name', 'invoke_agent'), s('lookout.agent_input', 'A customer asked about a REFUND for order 42'), s('lookout.agent_output', 'Refund approved; the money is on its way')] }, [
          { name: 'execute_tool lookup_order', attributes: [s('gen_ai.operation.name', 'execute_tool'), s('gen_ai.tool.name', 'lookup_order'), s('gen_ai.tool.call.arguments', '{"order_id":"42"}'), s('gen_ai.tool.call.result', '{"status":"shipped <fast>"}')] },
        ]),
    },
    {
      key: 'japanese',
      spans: (id) =>
        traceSpans(id, 2, { name: 'invoke_agent 受付', attributes: [s('lookout.agent_input', '返金について質問があります。注文番号は７７です')] }, [
          { name: 'execute_tool 在庫確認', attributes: [s('gen_ai.tool.name', 'stock_check')], error: { type: 'TimeoutError', message: '接続がタイムアウトしました' } },
        ]),
    },
    {
      key: 'scripts',
      spans: (id) =>
        traceSpans(id, 3, { name: 'invoke_agent world', attributes: [s('lookout.agent_input', 'Привет! Где мой ЗАКАЗ? مرحبا، أريد استرداد المبلغ. 환불 요청합니다. Un café crème, s\u2019il vous plaît. 我想申请退款')] }),
    },
    {
      key: 'shipping',
      spans: (id) => traceSpans(id, 4, { name: 'invoke_agent support', attributes: [s('lookout.agent_input', 'Where is my refund? Shipping took too long'), s('customer.tier', 'Platinum member')] }),
    },
    {
      key: 'log-event',
      spans: (id) => traceSpans(id, 5, { name: 'chat gpt-4o', attributes: [s('gen_ai.operation.name', 'chat'), s('gen_ai.request.model', 'gpt-4o')] }),
    },
  ];
}

async function post(path: string, key: string, projectId: string, body: unknown): Promise<void> {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-lookout-project': projectId },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function seedTenant(name: string): Promise<(typeof tenants)[number]> {
  const { tenantId, adminKey } = await svc.newTenant(name);
  const projectId = (await svc.newProject(`${name} project`, adminKey)).id;
  const ingestKey = await svc.newKey('ingest', { key: adminKey });
  const ids: Record<string, string> = {};
  const spans = corpus().flatMap((t) => {
    ids[t.key] = crypto.randomBytes(16).toString('hex');
    return t.spans(ids[t.key]);
  });
  await post('/v1/traces', ingestKey, projectId, { resourceSpans: [{ resource: { attributes: [s('service.name', 'search-svc')] }, scopeSpans: [{ scope: { name: 't' }, spans }] }] });
  // A user message that arrives as a GenAI log event, joined to the chat span.
  const message = { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'Please cancel my subscription to the Zebra plan' } }] } };
  const record = { timeUnixNano: baseNs.toString(), traceId: ids['log-event'], spanId: '0000000000000001', eventName: 'gen_ai.user.message', body: message };
  await post('/v1/logs', ingestKey, projectId, { resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] });
  return { tenantId, adminKey, projectId, ids };
}

interface Hit {
  otel_trace_id: string;
  match: { field: string; snippet: string } | null;
}

async function search(t: (typeof tenants)[number], query: string, extra = ''): Promise<{ status: number; body: { traces: Hit[]; next_cursor: string | null; detail?: string; code?: string } }> {
  return svc.call('GET', `/projects/${t.projectId}/traces?q=${encodeURIComponent(query)}${extra}`, { key: t.adminKey });
}

/** The corpus keys of the traces a search answers, in list order. */
async function found(t: (typeof tenants)[number], query: string, extra = ''): Promise<string[]> {
  const res = await search(t, query, extra);
  expect(res.status).toBe(200);
  const byId = new Map(Object.entries(t.ids).map(([k, id]) => [id, k]));
  return res.body.traces.map((h) => byId.get(h.otel_trace_id) ?? `foreign:${h.otel_trace_id}`);
}

beforeAll(async () => {
  svc = await startTestService({ TRACE_SETTLE_MS: '300', TRACE_MAX_WAIT_MS: '3000' });
  tenants.push(await seedTenant('search-a'), await seedTenant('search-b'));
  for (const t of tenants) {
    // Settled with the log event joined: the chat span's message is searchable.
    await waitFor(async () => ((await found(t, 'zebra')).length === 1 && (await found(t, 'approved')).length === 1 ? true : undefined), 120_000, 'the traces to settle');
  }
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

describe('GET /projects/{id}/traces?q=', () => {
  it('finds words case-insensitively, inside longer words, and marks them in a snippet of the field', async () => {
    const [a] = tenants;
    expect(await found(a, 'refund')).toEqual(['shipping', 'refund']);
    const res = await search(a, 'refund');
    const hit = res.body.traces.find((h) => h.otel_trace_id === a.ids.refund)!;
    expect(hit.match).toEqual({ field: 'input', snippet: 'A customer asked about a <mark>REFUND</mark> for order 42' });
    expect(await found(a, 'REFUNDS')).toEqual([]);
    expect(await found(a, 'efun')).toEqual(['shipping', 'refund']);
  });

  it('finds Japanese, Chinese, Korean, Arabic, Cyrillic and accented words', async () => {
    const [a] = tenants;
    expect(await found(a, '返金')).toEqual(['japanese']);
    expect(await found(a, '退款')).toEqual(['scripts']);
    expect(await found(a, '환불')).toEqual(['scripts']);
    expect(await found(a, 'استرداد')).toEqual(['scripts']);
    expect(await found(a, 'заказ')).toEqual(['scripts']);
    expect(await found(a, 'CAFÉ')).toEqual(['scripts']);
    expect(await found(a, 'cafe')).toEqual([]);
    // Full-width digits are the same digits (NFKC), and the apostrophe is kept as sent.
    expect(await found(a, '番号は77')).toEqual(['japanese']);
    const res = await search(a, '在庫');
    expect(res.body.traces[0].match).toEqual({ field: 'name', snippet: 'invoke_agent 受付 … execute_tool <mark>在庫</mark>確認' });
  });

  it('ANDs words, matches quoted phrases exactly, and excludes -words', async () => {
    const [a] = tenants;
    expect(await found(a, 'refund order')).toEqual(['refund']);
    expect(await found(a, '"refund for order"')).toEqual(['refund']);
    expect(await found(a, '"refund order"')).toEqual([]);
    expect(await found(a, 'refund -shipping')).toEqual(['refund']);
    expect(await found(a, 'refund -"took too long" -approved')).toEqual([]);
  });

  it('searches one field with field:word', async () => {
    const [a] = tenants;
    expect(await found(a, 'tool:lookup_order')).toEqual(['refund']);
    expect(await found(a, 'tool:shipped')).toEqual(['refund']);
    expect(await found(a, 'error:timeouterror')).toEqual(['japanese']);
    expect(await found(a, 'error:タイムアウト')).toEqual(['japanese']);
    expect(await found(a, 'output:refund')).toEqual(['refund']);
    expect(await found(a, 'input:approved')).toEqual([]);
    expect(await found(a, 'attribute:platinum')).toEqual(['shipping']);
    expect(await found(a, 'input:zebra')).toEqual(['log-event']);
    // A tool result's markup is escaped in the snippet, the match still marked.
    const res = await search(a, 'tool:shipped');
    expect(res.body.traces[0].match).toEqual({ field: 'tool', snippet: 'lookup_order … 42 … <mark>shipped</mark> &lt;fast&gt;' });
  });

  it('combines with the list filters and pages with the cursor', async () => {
    const [a] = tenants;
    expect(await found(a, 'refund', '&has_error=false')).toEqual(['shipping', 'refund']);
    expect(await found(a, 'error:timeout', '&has_error=true')).toEqual(['japanese']);
    expect(await found(a, 'refund', '&has_error=true')).toEqual([]);
    const first = await search(a, 'refund', '&limit=1');
    expect(first.body.traces.map((h) => h.otel_trace_id)).toEqual([a.ids.shipping]);
    expect(first.body.next_cursor).not.toBeNull();
    expect(await found(a, 'refund', `&limit=1&cursor=${first.body.next_cursor}`)).toEqual(['refund']);
    const last = await search(a, 'refund', `&limit=1&cursor=${first.body.next_cursor}`);
    expect(last.body.next_cursor).toBeNull();
    // Without q nothing carries a match.
    const plain = await svc.call('GET', `/projects/${a.projectId}/traces`, { key: a.adminKey });
    expect(plain.body.traces).toHaveLength(5);
    expect(plain.body.traces.every((t: object) => !('match' in t))).toBe(true);
  });

  it('keeps two tenants sharing every word apart', async () => {
    const [a, b] = tenants;
    for (const t of tenants) {
      const keys = await found(t, 'refund');
      expect(keys).toEqual(['shipping', 'refund']);
      expect(await found(t, '返金')).toEqual(['japanese']);
    }
    // The other tenant's project is not found, exactly as an unknown one.
    const cross = await svc.call('GET', `/projects/${a.projectId}/traces?q=refund`, { key: b.adminKey });
    expect(cross.status).toBe(404);
    // A key limited to another project of the same tenant cannot search this one.
    const other = await svc.newProject('search-a other', a.adminKey);
    const limited = await svc.newKey('read', { key: a.adminKey, projectId: other.id });
    expect((await svc.call('GET', `/projects/${a.projectId}/traces?q=refund`, { key: limited })).status).toBe(404);
    expect((await svc.call('GET', `/projects/${other.id}/traces?q=refund`, { key: limited })).body.traces).toEqual([]);
  });

  it('answers 400 naming q for a query it cannot run', async () => {
    const [a] = tenants;
    for (const [q, detail] of [
      ['a', /^q: each word or phrase needs at least 2 characters/],
      ['"refund', /^q: a quoted phrase is not closed$/],
      ['-refund', /^q: needs at least one word or phrase to find/],
      [Array.from({ length: 17 }, (_, i) => `w${i}`).join(' '), /^q: at most 16 words or phrases$/],
    ] as const) {
      const res = await search(a, q);
      expect([q, res.status, res.body.code]).toEqual([q, 400, 'validation_error']);
      expect(res.body.detail).toMatch(detail);
    }
    expect((await search(a, 'x'.repeat(1001))).status).toBe(400);
  });

  it('binds every word as a value: SQL and LIKE wildcards are searched as text', async () => {
    const [a] = tenants;
    expect(await found(a, "'); DROP TABLE trace_content; SELECT ('")).toEqual([]);
    expect(await found(a, '"\\\' OR 1=1"')).toEqual([]);
    expect(await found(a, '%%')).toEqual([]);
    expect(await found(a, 'lookup_order')).toEqual(['refund']);
    expect(await found(a, 'lookup%order')).toEqual([]);
    expect(await found(a, 'refund')).toEqual(['shipping', 'refund']);
  });
});
