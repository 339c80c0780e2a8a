import { describe, expect, it } from 'vitest';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';
import { decodeProtobufExport } from '../../../src/ingest/otlp/otlp-decode-protobuf.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { MAX_ANY_VALUE_DEPTH, OtlpDecodeError, type DecodedSpan } from '../../../src/spans/otlp-types.js';
import { validateExport } from '../../../src/spans/span-validation.js';

/**
 * Hostile and malformed OTLP: a bad span is rejected alone (its decodeProblem, then partial
 * success), a body that is not an export at all is an OtlpDecodeError (400), and no input throws
 * anything else: OTLP JSON with `attributes: [null]` once answered 500 (TypeError) and an
 * arrayValue nested 10,000 deep overflowed the stack.
 */

const TRACE = '5b8efff798038103d269b633813fc60c';
const nowNs = () => (BigInt(Date.now()) * 1_000_000n).toString();

function jsonSpan(overrides: Record<string, unknown> = {}, spanId = 'eee19b7ec3c1b174'): Record<string, unknown> {
  const start = nowNs();
  return { traceId: TRACE, spanId, name: 'op', startTimeUnixNano: start, endTimeUnixNano: start, ...overrides };
}

function jsonBody(spans: unknown[], resourceAttributes: unknown = [{ key: 'service.name', value: { stringValue: 'svc' } }]): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: resourceAttributes }, scopeSpans: [{ scope: { name: 's' }, spans }] }] });
}

function spansOf(decoded: ReturnType<typeof decodeJsonExport>): DecodedSpan[] {
  return decoded.resourceSpans.flatMap((rs) => rs.scopes.flatMap((s) => s.spans));
}

/**
 * Nested values as JSON text (JSON.stringify itself overflows the stack at 10,000 levels): a
 * placeholder string in the body is swapped for this text.
 */
const DEEP = '__deep_value__';
function nestedArrayJson(depth: number): string {
  return `${'{"arrayValue":{"values":['.repeat(depth)}{"stringValue":"leaf"}${']}}'.repeat(depth)}`;
}
function nestedKvlistJson(depth: number): string {
  return `${'{"kvlistValue":{"values":[{"key":"k","value":'.repeat(depth)}{"stringValue":"leaf"}${'}]}}'.repeat(depth)}`;
}
const withDeep = (body: string, deep: string) => body.replace(`"${DEEP}"`, deep);

describe('OTLP/JSON: malformed attributes and values reject their span only', () => {
  it.each([
    ['a null attribute', { attributes: [null] }, 'attributes[0] must be a KeyValue object, got null'],
    ['attributes that are not a list', { attributes: 'x' }, 'attributes must be an array'],
    ['an attribute that is a list', { attributes: [[1]] }, 'attributes[0] must be a KeyValue object, got an array'],
    ['a key that is an object', { attributes: [{ key: { a: 1 }, value: { stringValue: 'v' } }] }, 'attributes[0].key must be a string'],
    ['a value that is a string', { attributes: [{ key: 'k', value: 'v' }] }, 'attribute "k": the value must be an AnyValue object'],
    ['an intValue that is text', { attributes: [{ key: 'k', value: { intValue: 'ten' } }] }, 'attribute "k": intValue must be an integer or a decimal string'],
    ['an intValue with a fraction', { attributes: [{ key: 'k', value: { intValue: 1.5 } }] }, 'attribute "k": intValue 1.5 is not an integer'],
    ['a doubleValue that is text', { attributes: [{ key: 'k', value: { doubleValue: 'abc' } }] }, 'attribute "k": doubleValue must be a number'],
    ['a boolValue that is text', { attributes: [{ key: 'k', value: { boolValue: 'yes' } }] }, 'attribute "k": boolValue must be true or false'],
    ['a stringValue that is an object', { attributes: [{ key: 'k', value: { stringValue: { a: 1 } } }] }, 'attribute "k": stringValue must be a string'],
    ['arrayValue values that are not a list', { attributes: [{ key: 'k', value: { arrayValue: { values: 3 } } }] }, 'attribute "k": arrayValue.values must be an array'],
    ['a null kvlist entry', { attributes: [{ key: 'k', value: { kvlistValue: { values: [null] } } }] }, 'attribute "k": kvlistValue.values[0] must be a KeyValue object, got null'],
    ['a null event', { events: [null] }, 'events[0] must be an object'],
    ['a null event attribute', { events: [{ name: 'e', attributes: [null] }] }, 'events[0].attributes[0] must be a KeyValue object, got null'],
    ['a null link', { links: [null] }, 'links[0] must be an object'],
    ['a name that is an object', { name: { toString: 1 } }, 'name must be a string'],
  ])('%s', (_label, overrides, problem) => {
    const decoded = decodeJsonExport(jsonBody([jsonSpan(overrides), jsonSpan({}, '1111111111111111')]));
    const [bad, good] = spansOf(decoded);
    expect(bad.decodeProblem).toBe(problem);
    expect(bad.spanId).toBe('eee19b7ec3c1b174');
    expect(good.decodeProblem).toBeUndefined();
    const result = validateExport(decoded);
    expect(result.acceptedSpans).toBe(1);
    expect(result.rejectedSpans).toBe(1);
    expect(result.errorMessage).toBe(`rejected 1 of 2 spans: span eee19b7ec3c1b174: ${problem}`);
  });

  it('takes null values as the empty value, as the protobuf JSON mapping does', () => {
    const decoded = decodeJsonExport(
      jsonBody([jsonSpan({ attributes: [{ key: 'a', value: null }, { key: 'b' }, { key: 'c', value: {} }, { key: 'd', value: { stringValue: null } }], events: null, links: null })]),
    );
    const [span] = spansOf(decoded);
    expect(span.decodeProblem).toBeUndefined();
    expect(span.attributes).toEqual({ a: null, b: null, c: null, d: '' });
  });

  it('rejects a span that is not an object, keeping the others', () => {
    const decoded = decodeJsonExport(jsonBody([null, 7, jsonSpan()]));
    expect(spansOf(decoded).map((s) => s.decodeProblem)).toEqual(['the span must be an object, got null', 'the span must be an object, got number', undefined]);
    expect(validateExport(decoded)).toMatchObject({ acceptedSpans: 1, rejectedSpans: 2 });
  });

  it('rejects every span of a resource whose attributes are malformed', () => {
    const decoded = decodeJsonExport(jsonBody([jsonSpan(), jsonSpan({}, '1111111111111111')], [null]));
    expect(spansOf(decoded).map((s) => s.decodeProblem)).toEqual([
      'resource: attributes[0] must be a KeyValue object, got null',
      'resource: attributes[0] must be a KeyValue object, got null',
    ]);
  });

  it('keeps enum names that are Object.prototype keys from becoming values', () => {
    const [span] = spansOf(decodeJsonExport(jsonBody([jsonSpan({ kind: 'toString', status: { code: 'constructor' } })])));
    expect(span.kind).toBe(0);
    expect(span.statusCode).toBe(0);
  });

  it('refuses container lists that are not lists as an undecodable body', () => {
    expect(() => decodeJsonExport('{"resourceSpans":[null]}')).toThrow(OtlpDecodeError);
    expect(() => decodeJsonExport('{"resourceSpans":[{"scopeSpans":[5]}]}')).toThrow(/scopeSpans\[0\] must be an object/);
    expect(() => decodeJsonExport('{"resourceSpans":[{"scopeSpans":[{"spans":{}}]}]}')).toThrow(/spans must be an array/);
  });
});

describe(`nesting deeper than ${MAX_ANY_VALUE_DEPTH} levels`, () => {
  it.each([
    ['arrayValue', nestedArrayJson],
    ['kvlistValue', nestedKvlistJson],
  ])('OTLP/JSON %s: accepted at the bound, the span rejected past it and at 10,000 levels', (_name, nested) => {
    for (const [depth, ok] of [
      [MAX_ANY_VALUE_DEPTH, true],
      [MAX_ANY_VALUE_DEPTH + 1, false],
      [10_000, false],
    ] as const) {
      const body = jsonBody([jsonSpan({ attributes: [{ key: 'deep', value: DEEP }] }), jsonSpan({}, '1111111111111111')]);
      const decoded = decodeJsonExport(withDeep(body, nested(depth)));
      const [span, other] = spansOf(decoded);
      expect(span.decodeProblem, `depth ${depth}`).toBe(ok ? undefined : `attribute "deep": arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
      expect(other.decodeProblem).toBeUndefined();
    }
  });

  it('OTLP/JSON: the same bound holds in resource, event and link attributes', () => {
    const deep = [{ key: 'deep', value: DEEP }];
    const decode = (body: string) => spansOf(decodeJsonExport(withDeep(body, nestedArrayJson(10_000))));
    const inEvent = decode(jsonBody([jsonSpan({ events: [{ name: 'e', attributes: deep }] })]));
    expect(inEvent[0].decodeProblem).toMatch(/nested deeper than 32 levels/);
    const inLink = decode(jsonBody([jsonSpan({ links: [{ traceId: TRACE, spanId: '2222222222222222', attributes: deep }] })]));
    expect(inLink[0].decodeProblem).toMatch(/nested deeper than 32 levels/);
    const inResource = decode(jsonBody([jsonSpan()], deep));
    expect(inResource[0].decodeProblem).toMatch(/^resource: .*nested deeper than 32 levels/);
  });

  /** Protobuf bytes of one field: tag, length, payload (wire type 2). */
  function field(number: number, payload: Buffer): Buffer {
    const varint = (n: number) => {
      const out: number[] = [];
      while (n > 0x7f) {
        out.push((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      out.push(n);
      return Buffer.from(out);
    };
    return Buffer.concat([varint((number << 3) | 2), varint(payload.length), payload]);
  }

  /** An ExportTraceServiceRequest whose one span carries an arrayValue nested `depth` levels, written byte by byte. */
  function protobufWithNesting(depth: number): Buffer {
    let value = field(1, Buffer.from('leaf')); // AnyValue.string_value
    for (let i = 0; i < depth; i++) value = field(5, field(1, value)); // AnyValue.array_value → ArrayValue.values
    const fixed64 = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(n);
      return b;
    };
    const start = BigInt(Date.now()) * 1_000_000n;
    const span = Buffer.concat([
      field(1, Buffer.from(TRACE, 'hex')),
      field(2, Buffer.from('eee19b7ec3c1b174', 'hex')),
      field(5, Buffer.from('op')),
      Buffer.from([(7 << 3) | 1]), fixed64(start),
      Buffer.from([(8 << 3) | 1]), fixed64(start),
      field(9, Buffer.concat([field(1, Buffer.from('deep')), field(2, value)])), // attributes: KeyValue
    ]);
    return field(1, field(2, field(2, span))); // request.resource_spans → scope_spans → spans
  }

  it('protobuf: a too deep value in an event\'s or a link\'s attributes is named by its attribute key, as OTLP/JSON names it', () => {
    let value: unknown = { stringValue: 'leaf' };
    for (let i = 0; i < MAX_ANY_VALUE_DEPTH + 5; i++) value = { arrayValue: { values: [value] } };
    const deep = [{ key: 'deep', value }];
    const start = String(BigInt(Date.now()) * 1_000_000n);
    const ids = { traceId: Buffer.from(TRACE, 'hex'), spanId: Buffer.from('eee19b7ec3c1b174', 'hex') };
    const type = otlpSchema().ExportTraceServiceRequest;
    const problemOf = (extra: object) => {
      const request = { resourceSpans: [{ scopeSpans: [{ spans: [{ ...ids, name: 'op', startTimeUnixNano: start, endTimeUnixNano: start, ...extra }] }] }] };
      return spansOf(decodeProtobufExport(Buffer.from(type.encode(type.fromObject(request)).finish())))[0].decodeProblem;
    };
    const json = spansOf(decodeJsonExport(withDeep(jsonBody([jsonSpan({ events: [{ name: 'e', attributes: [{ key: 'deep', value: DEEP }] }] })]), nestedArrayJson(MAX_ANY_VALUE_DEPTH + 5))))[0];
    const expected = `attribute "deep": arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`;
    expect(json.decodeProblem).toBe(expected);
    expect(problemOf({ events: [{ name: 'e', attributes: deep }] })).toBe(expected);
    expect(problemOf({ links: [{ traceId: ids.traceId, spanId: Buffer.from('2222222222222222', 'hex'), attributes: deep }] })).toBe(expected);
  });

  it('protobuf: the span is rejected past the bound; past protobufjs\'s own limit the body is a 400, never a stack overflow', () => {
    const atBound = decodeProtobufExport(protobufWithNesting(MAX_ANY_VALUE_DEPTH));
    expect(spansOf(atBound)[0].decodeProblem).toBeUndefined();
    expect(spansOf(atBound)[0].attributes.deep).toEqual(JSON.parse(`${'['.repeat(MAX_ANY_VALUE_DEPTH)}"leaf"${']'.repeat(MAX_ANY_VALUE_DEPTH)}`));
    const past = decodeProtobufExport(protobufWithNesting(MAX_ANY_VALUE_DEPTH + 5));
    expect(spansOf(past)[0].decodeProblem).toBe(`attribute "deep": arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
    for (const depth of [60, 10_000]) {
      expect(() => decodeProtobufExport(protobufWithNesting(depth))).toThrow(OtlpDecodeError);
      expect(() => decodeProtobufExport(protobufWithNesting(depth))).toThrow(/maximum nesting depth exceeded/);
    }
    // The hand-written bytes are what protobufjs itself would write.
    const type = otlpSchema().ExportTraceServiceRequest;
    expect(type.verify(type.toObject(type.decode(protobufWithNesting(3))))).toBeNull();
  });
});

describe('an attribute named __proto__', () => {
  // A kvlist under the key "__proto__" must stay an ordinary attribute: assigned with `=` it became
  // the attributes' prototype, so the mapping saw an agent name that storage never kept.
  const inner = [{ key: 'gen_ai.agent.name', value: { stringValue: 'PROTO-AGENT' } }];
  const attributes = [{ key: '__proto__', value: { kvlistValue: { values: inner } } }, { key: 'k', value: { stringValue: 'v' } }];

  function expectOwn(decoded: DecodedSpan) {
    expect(Object.getPrototypeOf(decoded.attributes)).toBe(Object.prototype);
    expect(decoded.attributes['gen_ai.agent.name']).toBeUndefined();
    expect(Object.keys(decoded.attributes)).toEqual(['__proto__', 'k']);
    expect(JSON.parse(JSON.stringify(decoded.attributes))).toEqual(JSON.parse('{"__proto__":{"gen_ai.agent.name":"PROTO-AGENT"},"k":"v"}'));
  }

  it('OTLP/JSON keeps it as an own attribute', () => {
    expectOwn(spansOf(decodeJsonExport(jsonBody([jsonSpan({ attributes })])))[0]);
  });

  it('protobuf keeps it as an own attribute', () => {
    const type = otlpSchema().ExportTraceServiceRequest;
    const start = String(BigInt(Date.now()) * 1_000_000n);
    const span = { traceId: Buffer.from(TRACE, 'hex'), spanId: Buffer.from('eee19b7ec3c1b174', 'hex'), name: 'op', startTimeUnixNano: start, endTimeUnixNano: start, attributes };
    const body = Buffer.from(type.encode(type.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish());
    expectOwn(spansOf(decodeProtobufExport(body))[0]);
  });
});
