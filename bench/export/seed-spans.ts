import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';

/** Spans per seeded trace; the traces' first spans spread over 30 days from `base`. */
export const SPANS_PER_TRACE = 10;
const DAY = 86_400_000;
const INSERT_ROWS = 1_000_000;

/**
 * The export benchmarks' spans (`rows` of them, in traces of SPANS_PER_TRACE), written by INSERT …
 * SELECT straight into `spans` as settling leaves them (a trace's spans 1 ms apart, attributes of a
 * model call).
 */
export async function seedSpans(ch: ClickHouseStore, tenantId: string, projectId: string, base: number, rows: number): Promise<void> {
  const started = performance.now();
  const trace = `intDiv(n, ${SPANS_PER_TRACE})`;
  const at = `fromUnixTimestamp64Milli(toInt64({base:Int64} + (${trace} * 2591) % ${30 * DAY} + n % ${SPANS_PER_TRACE}), 'UTC')`;
  for (let lo = 0; lo < rows; lo += INSERT_ROWS) {
    const count = Math.min(INSERT_ROWS, rows - lo);
    await ch.client.command({
      query: `INSERT INTO ${ch.table('spans')} (tenant_id, project_id, trace_id, otel_trace_id, span_id, parent_span_id, name, kind, start_time_ns,
                end_time_ns, duration_ms, status_code, service_name, span_class, model, agent_name, attributes, events, resource, timestamp, ingested_at)
              SELECT {tenant:String}, {project:String}, toString(reinterpretAsUUID(MD5(toString(${trace})))), lower(hex(MD5(toString(${trace})))),
                lower(hex(cityHash64(n))), if(n % ${SPANS_PER_TRACE} = 0, '', lower(hex(cityHash64(n - n % ${SPANS_PER_TRACE})))),
                concat('llm call ', toString(n % 7)), 'CLIENT', toUInt64(toUnixTimestamp64Nano(${at})), toUInt64(toUnixTimestamp64Nano(${at})) + 5000000,
                5, 'OK', 'bench-agent', 'llm', 'gpt-4o', 'agent',
                concat('{"gen_ai.request.model":"gpt-4o","gen_ai.usage.input_tokens":', toString(n % 1000), '}'), '[]', '{"service.name":"bench-agent"}', ${at}, ${at}
              FROM (SELECT number AS n FROM numbers(${lo}, ${count}))`,
      query_params: { tenant: tenantId, project: projectId, base },
    });
  }
  console.log(`seeded ${rows} spans (${rows / SPANS_PER_TRACE} traces) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
