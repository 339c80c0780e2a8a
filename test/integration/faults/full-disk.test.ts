import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyz as readyzOf, sleep, until } from '../../helpers/fault-probes.js';
import { expectAcknowledgedStoredOnce, expectHonestAnswers } from '../../helpers/fault-expectations.js';
import { postmasterPid } from '../../helpers/postgres-process.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { SteadySender } from '../../helpers/steady-sender.js';

/**
 * The disk under DATA_DIR filled to the last byte during steady ingest: DATA_DIR lives on a small
 * filesystem of its own (a tmpfs mounted for this test, so the machine's disk is never touched), and
 * a ballast file takes every byte left. Ingest answers 503 + Retry-After (never 500, never past the
 * exporter's timeout), /readyz answers 503 naming the disk, the embedded PostgreSQL keeps running
 * (the same postmaster throughout), and once the ballast is removed Lookout is ready and stores
 * spans again by itself; every acknowledged span is stored exactly once. Mounting needs root
 * (CAP_SYS_ADMIN), which the test and CI machines have.
 */

const FILESYSTEM_MB = 384;
let mountPoint: string;
let svc: TestService;
let project: { id: string };
let sender: SteadySender;
let ballast: string;

const readyz = () => readyzOf(svc.url);

function mountTmpfs(dir: string, sizeMb: number): void {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`the full-disk test mounts a ${sizeMb} MiB tmpfs for DATA_DIR and needs root (CAP_SYS_ADMIN): ${stderr}`, { cause: error });
  }
}

/** Writes `file` until the filesystem refuses another byte (1 MiB blocks, then 4 KiB, then single bytes); the bytes written. */
function fillToTheLastByte(file: string): number {
  const fd = fs.openSync(file, 'w');
  let written = 0;
  try {
    for (const size of [1024 * 1024, 4096, 1]) {
      const block = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          written += fs.writeSync(fd, block);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return written;
}

const freeBytes = (dir: string) => {
  const stats = fs.statfsSync(dir);
  return Number(stats.bavail) * Number(stats.bsize);
};

beforeAll(async () => {
  mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-full-disk-'));
  mountTmpfs(mountPoint, FILESYSTEM_MB);
  const dataDir = path.join(mountPoint, 'data');
  fs.mkdirSync(dataDir, { mode: 0o755 });
  ballast = path.join(mountPoint, 'ballast');
  svc = await startTestService({ INGEST_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_SECONDS: '8', DATA_DIR_MIN_FREE_MB: '32' }, dataDir);
  project = await svc.newProject('full disk');
  sender = new SteadySender(svc.url, await svc.newKey('ingest'), project.id);
  sender.start();
  await sleep(1_500);
});

afterAll(async () => {
  if (ballast) fs.rmSync(ballast, { force: true });
  await sender?.stop().catch(() => {});
  await svc?.stop();
  if (mountPoint) {
    try {
      execFileSync('umount', [mountPoint], { stdio: 'pipe' });
    } catch {
      // Still busy (a process of this test not yet gone): detach it; the kernel frees it when unused.
      execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
    }
    fs.rmSync(mountPoint, { recursive: true, force: true });
  }
});

describe('the disk under DATA_DIR filled to the last byte during steady ingest', () => {
  it('refuses ingest with 503 + Retry-After, /readyz names the disk, PostgreSQL keeps running; recovers once space is freed', async () => {
    expect((await readyz()).status).toBe(200);
    const postmaster = postmasterPid(svc.dataDir);
    const since = Date.now();
    expect(fillToTheLastByte(ballast)).toBeGreaterThan(0);
    expect(freeBytes(mountPoint)).toBeLessThan(64 * 1024);

    await until('/readyz 503 naming the disk', async () => {
      const ready = await readyz();
      return ready.status === 503 && ready.body.disk === false && ready.body.failed.includes('disk');
    }, 10_000);
    // A while full, with the senders retrying all along.
    await sleep(8_000);
    const full = sender.answersSince(since);
    expect(full.some((a) => a.status === 503 && a.code === 'store_unavailable' && Number(a.retryAfter) > 0)).toBe(true);
    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ postgres: true, disk: false });
    // The same postmaster, alive: PostgreSQL was never starved into a crash.
    expect(postmasterPid(svc.dataDir)).toBe(postmaster);
    expect(() => process.kill(postmaster, 0)).not.toThrow();
    // Reads still answer.
    expect((await svc.call('GET', `/projects/${project.id}/traces?limit=5`)).status).toBe(200);

    fs.rmSync(ballast);
    const freed = Date.now();
    await until('/readyz 200 after space is freed', async () => (await readyz()).status === 200, 30_000);
    await until('ingest 200 after space is freed', async () => sender.answersSince(freed).some((a) => a.status === 200), 30_000);
    expect(postmasterPid(svc.dataDir)).toBe(postmaster);
    expectHonestAnswers(sender, since);
  });

  it('afterwards: every acknowledged span stored exactly once, nothing unacknowledged, every run settled', async () => {
    await expectAcknowledgedStoredOnce(sender, svc.service.deps.ch, project.id);
  });
});
