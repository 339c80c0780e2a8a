import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { prepareClickHouseServers, type ClickHouseServer } from '../../helpers/clickhouse-server/clickhouse-server.js';
import { until } from '../../helpers/fault-probes.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { BOOTSTRAP_KEY, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * A ClickHouse server that is not up yet when Lookout starts (one boot starting both): Lookout
 * retries its first statement with back-off, logging each try, and once the server comes up it
 * starts normally, becomes ready and stores spans. Past CLICKHOUSE_STARTUP_WAIT_MS it gives up with
 * a plain log line and exit code 1.
 */

let server: ClickHouseServer;
const dirs: string[] = [];
const services: SpawnedService[] = [];

const serverEnv = () => ({
  CLICKHOUSE_URL: server.url,
  CLICKHOUSE_USER: server.user,
  CLICKHOUSE_PASSWORD: server.password,
  CLICKHOUSE_DATABASE: 'lookout',
});

const dataDir = () => {
  const dir = tempDataDir('lookout-ch-startup-');
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  [server] = await prepareClickHouseServers(1);
});

afterAll(async () => {
  for (const svc of services) await svc.stop().catch(() => {});
  await server?.stop();
  for (const dir of dirs) removeDir(dir);
  if (server) removeDir(server.dataDir);
});

/** Log lines (pino JSON) whose msg is `msg`. */
function logLines(output: string, msg: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

describe('a ClickHouse server that refuses connections at start-up', () => {
  it('gives up after CLICKHOUSE_STARTUP_WAIT_MS with a plain log line and exit code 1', async () => {
    expect(await server.ping()).toBe(false);
    const failed = await spawnService(dataDir(), { ...serverEnv(), CLICKHOUSE_STARTUP_WAIT_MS: '1500' }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(failed).toMatch(/service exited with 1/);
    expect(failed).toContain('ClickHouse server not reachable yet; retrying');
    expect(failed).toContain('ClickHouse server still not reachable; giving up (CLICKHOUSE_STARTUP_WAIT_MS)');
    expect(failed).toContain('start-up failed');
  });

  it('is waited for with back-off, each try logged; once it is up Lookout starts, is ready and stores spans', async () => {
    let retried = false;
    const starting = spawnService(dataDir(), { ...serverEnv(), CLICKHOUSE_STARTUP_WAIT_MS: '180000' }, undefined, {
      onOutput: (output) => {
        retried ||= output.includes('ClickHouse server not reachable yet; retrying');
      },
    });
    // Refused for a while (at least two tries), then the server comes up.
    await until('Lookout retrying the server', async () => retried, 90_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await server.start();
    const svc = await starting;
    services.push(svc);

    const retries = logLines(svc.output(), 'ClickHouse server not reachable yet; retrying');
    expect(retries.length).toBeGreaterThanOrEqual(2);
    for (const line of retries) expect(line).toMatchObject({ url: server.url, retryInMs: expect.any(Number), attempt: expect.any(Number) });
    // Back-off: each wait at least the one before, up to 5 s.
    const waits = retries.map((line) => Number(line.retryInMs));
    expect(waits).toEqual([...waits].sort((a, b) => a - b));
    expect(Math.max(...waits)).toBeLessThanOrEqual(5_000);
    expect(logLines(svc.output(), 'ClickHouse server reachable; starting')).toEqual([expect.objectContaining({ attempts: retries.length + 1 })]);

    await until('/readyz 200', async () => (await fetch(`${svc.url}/readyz`)).status === 200, 30_000);
    const created = await fetch(`${svc.url}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'late server' }),
    });
    expect(created.status).toBe(201);
    const project = (await created.json()) as { id: string };
    const { body, traceId } = agentRunRequest({ start: new Date(Date.now() - 60_000), agent: 'late', generations: [{ model: 'gpt-4o', input: 10, output: 1 }] });
    const ingested = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP_KEY}`, 'x-lookout-project': project.id },
      body,
    });
    expect(ingested.status).toBe(200);
    const stored = lookoutTraceId(project.id, traceId);
    await until(
      'the trace listed',
      async () => {
        const res = await fetch(`${svc.url}/api/projects/${project.id}/traces?limit=10`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } });
        const page = (await res.json()) as { traces: { id: string }[] };
        return page.traces.some((t) => t.id === stored);
      },
      60_000,
    );
  });
});
