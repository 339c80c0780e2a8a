/**
 * ANALYTICS_NICE on the in-process engine: the engine's threads take the nice value while they run
 * an analytics statement, so the OS schedules trace reads, inserts and settle rounds ahead of them,
 * and give it back when the statement ends. The service runs in this process, so its engine's
 * threads are this process's threads (/proc/self/task). The engine changes a thread's priority only
 * where the process may (CAP_SYS_NICE, which root has); without it the setting changes nothing,
 * and that is what the test then asserts.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuBoundRead } from '../../helpers/cpu-bound-read.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const NICE = 7;
const CAP_SYS_NICE = 23;

let svc: TestService;
let tenantId: string;
let projectId: string;

beforeAll(async () => {
  svc = await startTestService({ ANALYTICS_NICE: String(NICE) });
  const tenant = await svc.newTenant('nice');
  tenantId = tenant.tenantId;
  projectId = (await svc.newProject('nice', tenant.adminKey)).id;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

/** The nice value of each thread of this process. */
function threadNices(): number[] {
  const nices: number[] = [];
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      // Fields after the command's closing parenthesis start at the third (state); nice is the 19th.
      const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      nices.push(Number(fields[16]));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return nices;
}

function mayChangePriority(): boolean {
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${capEff}`) >> BigInt(CAP_SYS_NICE)) & 1n ? true : false;
}

/** A CPU-bound statement on `lane`, stopped by its time limit after about `seconds`. */
function cpuBound(lane: 'analytics' | 'interactive', seconds: number): Promise<unknown> {
  const scope = { tenantId, projectId };
  return svc.service.deps.ch.read(cpuBoundRead(scope), { lane, scope, timeoutSeconds: seconds }).catch((error: unknown) => error);
}

/** The most threads seen at `nice` at once while `statement` runs (sampled every 50 ms). */
async function mostAtNice(statement: Promise<unknown>): Promise<number> {
  let running = true;
  void statement.finally(() => (running = false));
  let most = 0;
  while (running) {
    most = Math.max(most, threadNices().filter((n) => n === NICE).length);
    await new Promise((r) => setTimeout(r, 50));
  }
  return most;
}

describe('ANALYTICS_NICE', () => {
  it('runs an analytics statement on threads at the nice value, gives it back after, and leaves other lanes alone', async () => {
    expect(threadNices().filter((n) => n === NICE)).toEqual([]);
    const analytics = await mostAtNice(cpuBound('analytics', 2));
    const interactive = await mostAtNice(cpuBound('interactive', 2));
    if (mayChangePriority()) {
      expect(analytics).toBeGreaterThan(0);
    } else {
      // Without CAP_SYS_NICE the engine leaves every thread's priority as it is.
      expect(analytics).toBe(0);
    }
    expect(interactive).toBe(0);
    // Given back: the pool's threads serve the next statement of any lane at the usual priority.
    await expect.poll(() => threadNices().filter((n) => n === NICE).length, { timeout: 5_000 }).toBe(0);
  });
});
