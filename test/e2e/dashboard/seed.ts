import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../../src/app/project-root.js';
import type { TestService } from '../../helpers/service.js';

const run = promisify(execFile);

/**
 * Seeds the service the way a newcomer does: `npm run demo` (scripts/demo.ts, through tsx) against
 * it with the admin key, which creates the "Demo" project and exports its agent runs with the stock
 * OpenTelemetry OTLP exporter. Then waits until every run is processed and issues are extracted, so
 * the browser never looks at a half-settled project. Returns the Demo project's id.
 */
export async function seedWithDemo(svc: TestService): Promise<string> {
  return (await seedWithDemoOutput(svc)).projectId;
}

/** seedWithDemo, also returning what the demo printed (the docs tests run its printed commands). */
export async function seedWithDemoOutput(svc: TestService): Promise<{ projectId: string; stdout: string }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'scripts', 'demo.ts')], {
    cwd: projectRoot,
    env: { ...process.env, LOOKOUT_URL: svc.url, LOOKOUT_API_KEY: svc.adminKey },
    timeout: 120_000,
  });
  const sent = /Sent (\d+) agent runs/.exec(stdout);
  if (!sent) throw new Error(`demo did not report its runs: ${stdout}`);
  const runs = Number(sent[1]);
  const projects = await svc.call('GET', '/projects');
  const demo = projects.body.projects.find((p: { name: string }) => p.name === 'Demo');
  if (!demo) throw new Error('demo project not found');

  const deadline = Date.now() + 90_000;
  for (;;) {
    const traces = await svc.call('GET', `/projects/${demo.id}/traces?limit=200`);
    const issues = await svc.call('GET', `/projects/${demo.id}/issues`);
    if (traces.body?.traces?.length === runs && issues.body?.issues?.length > 0) {
      const pending = await Promise.all(
        traces.body.traces.map(async (t: { id: string }) => (await svc.call('GET', `/traces/${t.id}`)).body?.issue_extraction?.status === 'pending'),
      );
      if (!pending.some(Boolean)) break;
    }
    if (Date.now() > deadline) throw new Error(`demo runs not processed in time (${traces.body?.traces?.length ?? 0} of ${runs})`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { projectId: demo.id, stdout };
}
