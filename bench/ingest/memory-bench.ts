/**
 * Memory under ingest overload (issue 13 item 5): the service's peak RSS while many senders push
 * 1000-span batches at a small memory budget, and the RSS that a series of concurrent gzip bombs
 * adds. Targets: INGEST_MAX_INFLIGHT_BYTES=8MiB with 64 senders → peak RSS ≤ 1 GiB; 48 bombs of
 * ~20 KB that inflate to ~20 MiB each → < 300 MiB added.
 *
 *   npx tsx bench/ingest/memory-bench.ts [--senders 64] [--batches 640] [--batch-size 1000] [--bombs 48]
 *
 * The service runs as its own process (its RSS is read from /proc: VmHWM for the peak, VmRSS
 * before the bombs); senders retry 429/503 after a short back-off, as exporters do.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { syntheticBatch } from './synthetic-batch.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SENDERS = arg('senders', 64);
const BATCHES = arg('batches', 640);
const BATCH_SPANS = arg('batch-size', 1000);
const BOMBS = arg('bombs', 48);
const KEY = 'lk_bench_bootstrap_key_0123456789';
const MiB = 1024 * 1024;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024);
}

async function startService(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-memory-'));
  fs.chmodSync(dataDir, 0o755);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const created = await fetch(`${url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'memory bench' }),
  });
  const project = ((await created.json()) as { id: string }).id;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    project,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function post(url: string, project: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'x-lookout-project': project, ...headers },
    body: new Uint8Array(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function overload(): Promise<void> {
  const service = await startService({ INGEST_MAX_INFLIGHT_BYTES: String(8 * MiB) });
  try {
    const batches = Array.from({ length: Math.min(BATCHES, 64) }, () => syntheticBatch(BATCH_SPANS));
    const baseline = statusMiB(service.pid, 'VmRSS');
    let next = 0;
    let refusals = 0;
    const started = Date.now();
    const sender = async () => {
      for (let i = next++; i < BATCHES; i = next++) {
        // Batches are reused round-robin; re-sent spans are acknowledged as duplicates, decoded all the same.
        const batch = batches[i % batches.length];
        for (;;) {
          const status = await post(service.url, service.project, batch.protobuf, { 'content-type': 'application/x-protobuf' });
          if (status === 200) break;
          if (status !== 429 && status !== 503) throw new Error(`unexpected ${status}`);
          refusals++;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `overload: ${SENDERS} senders, ${BATCHES} batches of ${BATCH_SPANS} spans, INGEST_MAX_INFLIGHT_BYTES=8MiB: ` +
        `${seconds.toFixed(1)} s, ${refusals} refusals (429/503), RSS ${baseline} MiB idle → peak ${statusMiB(service.pid, 'VmHWM')} MiB (target ≤ 1024)\n`,
    );
  } finally {
    await service.stop();
  }
}

async function bombs(): Promise<void> {
  const service = await startService({});
  try {
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"resourceSpans":[],"pad":"'), Buffer.alloc(20 * MiB - 64, 0x20), Buffer.from('"}')]));
    const before = statusMiB(service.pid, 'VmRSS');
    const statuses = await Promise.all(
      Array.from({ length: BOMBS }, () => post(service.url, service.project, bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' })),
    );
    const counts = statuses.reduce<Record<number, number>>((c, s) => ({ ...c, [s]: (c[s] ?? 0) + 1 }), {});
    const peak = statusMiB(service.pid, 'VmHWM');
    process.stdout.write(
      `gzip bombs: ${BOMBS} × ${(bomb.length / 1024).toFixed(0)} KB → 20 MiB at once, default budget: answers ${JSON.stringify(counts)}, ` +
        `RSS ${before} MiB before → peak ${peak} MiB: +${peak - before} MiB (target < 300)\n`,
    );
  } finally {
    await service.stop();
  }
}

await overload();
await bombs();
