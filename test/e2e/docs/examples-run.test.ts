import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { codeBlocks, curlCommands, docFiles, readDoc } from '../../helpers/markdown.js';
import { ShellSession } from '../../helpers/shell-session.js';
import { seedWithDemoOutput } from '../dashboard/seed.js';

/**
 * The examples a newcomer copies: `npm run demo`'s printed commands, every curl line of README.md
 * and docs/, and the worked analytics queries of docs/querying.md, each run as printed against a
 * service filled by the demo. Only the host changes (the test service listens on a free port);
 * $LOOKOUT_API_KEY, $PROJECT_ID, $TRACE_ID and $ISSUE_ID are set the way the docs tell the reader to.
 */
let svc: TestService;
let projectId: string;
let demoOutput: string;
let vars: Record<string, string>;
/** The reader's working directory: holds query.json, as docs/querying.md tells the reader to save it. */
let workDir: string;
/** The reader's shell, in workDir with only PATH and HOME of this environment. */
let shell: ShellSession;

/** The demo's runs are in the last 24 hours; the docs' example window is a fixed day. */
function demoWindow(): { start: string; end_exclusive: string } {
  const hour = 3_600_000;
  const end = new Date(Math.ceil(Date.now() / hour) * hour);
  const text = (d: Date) => d.toISOString().replace('.000Z', 'Z');
  return { start: text(new Date(end.getTime() - 25 * hour)), end_exclusive: text(end) };
}

function workedQueries(): { line: number; body: Record<string, unknown> }[] {
  return codeBlocks(readDoc('docs/querying.md'))
    .filter((b) => b.lang === 'json' && b.text.includes('"from"'))
    .map((b) => ({ line: b.line, body: JSON.parse(b.text) as Record<string, unknown> }));
}

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-docs-'));
  shell = new ShellSession(workDir, { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
  svc = await startTestService();
  ({ projectId, stdout: demoOutput } = await seedWithDemoOutput(svc));
  const traces = await svc.call('GET', `/projects/${projectId}/traces?limit=1`);
  const issues = await svc.call('GET', `/projects/${projectId}/issues`);
  fs.writeFileSync(path.join(workDir, 'query.json'), JSON.stringify({ ...workedQueries()[0].body, ...demoWindow() }));
  vars = { LOOKOUT_API_KEY: svc.adminKey, PROJECT_ID: projectId, TRACE_ID: traces.body.traces[0].id, ISSUE_ID: issues.body.issues[0].id };
}, 240_000);

afterAll(async () => {
  shell?.close();
  await svc?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

/** The status code of a curl command line run in the reader's shell (curl prints only that). */
async function statusOf(command: string, env: Record<string, string> = {}, prelude = ''): Promise<number> {
  const counted = prelude + command.replace(/^curl /, `curl -sS -o /dev/null -w '%{http_code}' `);
  const { stdout, code } = await shell.run(counted, env);
  expect(code, `${command}: ${shell.stderr}`).toBe(0);
  return Number(stdout.trim());
}

describe('npm run demo prints what to do next', () => {
  it('names the dashboard URL of the project it filled', () => {
    expect(demoOutput).toContain(`Dashboard: ${svc.url}/p/${projectId}`);
  });

  it('prints commands that work when pasted into a shell without LOOKOUT_API_KEY set', async () => {
    const lines = demoOutput.split('\n').map((l) => l.trim());
    const exports = lines.filter((l) => l.startsWith('export '));
    expect(exports).toEqual([`export LOOKOUT_API_KEY=${svc.adminKey}`, `export PROJECT_ID=${projectId}`]);
    const exportLine = exports.join('; ');
    const curls = lines.filter((l) => l.startsWith('curl '));
    expect(curls.length).toBeGreaterThanOrEqual(3);
    for (const command of curls) {
      // The demo prints the real host already: no rewriting.
      const status = await statusOf(command, {}, `${exportLine}; `);
      expect(status, command).toBeGreaterThanOrEqual(200);
      expect(status, command).toBeLessThan(300);
    }
  });

  it('sends as many runs and agents as the README says', async () => {
    const sent = /Sent (\d+) agent runs/.exec(demoOutput);
    const readme = readDoc('README.md');
    expect(readme).toContain(`sends ${sent?.[1]} agent runs`);
    const agents = await svc.call('GET', '/traces/agent-names');
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six'];
    expect(readme).toContain(`${words[agents.body.agent_names.length]} agents`);
  });
});

describe('curl examples of README.md and docs/', () => {
  const cases = docFiles().flatMap((file) => curlCommands(readDoc(file)).map((c) => ({ file, ...c })));

  it('the README has curl examples to run', () => {
    expect(cases.filter((c) => c.file === 'README.md').length).toBeGreaterThanOrEqual(4);
  });

  it.each(cases.map((c) => [`${c.file}:${c.line} ${c.command}`, c] as const))('%s answers 2xx', async (_name, c) => {
    const status = await statusOf(c.command.replaceAll('http://localhost:8080', svc.url), vars);
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(300);
  });
});

describe('worked queries of docs/querying.md', () => {
  const queries = workedQueries();

  it('shows every feature of the query language at least once', () => {
    const has = (test: (q: Record<string, any>) => boolean) => queries.some((q) => test(q.body));
    expect(has((q) => q.measures.length > 1)).toBe(true);
    expect(has((q) => Array.isArray(q.filters) && q.filters.length > 0)).toBe(true);
    expect(has((q) => q.measures.some((m: { filter?: unknown }) => m.filter))).toBe(true);
    expect(has((q) => q.group_by?.some((g: { field?: string }) => g.field))).toBe(true);
    expect(has((q) => q.group_by?.some((g: { bucket?: string }) => g.bucket))).toBe(true);
    expect(has((q) => Array.isArray(q.order_by))).toBe(true);
    expect(has((q) => q.join)).toBe(true);
    expect(has((q) => q.measures.some((m: { agg: string }) => m.agg === 'trace_cost'))).toBe(true);
    expect(has((q) => q.measures.some((m: { agg: string }) => m.agg === 'generation_cost'))).toBe(true);
  });

  it.each(queries.map((q) => [`line ${q.line}`, q] as const))('%s runs on the demo data and returns rows', async (_name, q) => {
    const body = { ...q.body, ...demoWindow() };
    const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, { body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.rows.length).toBeGreaterThan(0);
  });
});
