import type { Batch } from '../test/helpers/synthetic-batch.js';
import { BENCH_KEY, type ServiceProcess } from './service-process.js';

export type Encoding = 'protobuf' | 'json';

export interface SendResult {
  spans: number;
  seconds: number;
  rate: number;
  /** Answers 429/503 that were retried. */
  retries: number;
}

/** POSTs one body to /v1/traces of the service's project; answers the status. */
export async function postTraces(svc: ServiceProcess, body: Uint8Array, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'x-lookout-project': svc.project, 'content-type': 'application/x-protobuf', ...headers },
    body: new Uint8Array(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Sends every batch with `senders` concurrent senders, each taking the next batch when done; a
 * 429/503 (overload) backs off 100 ms and retries, as an exporter does. Any other status fails.
 */
export async function sendBatches(svc: ServiceProcess, batches: Batch[], senders: number, encoding: Encoding = 'protobuf'): Promise<SendResult> {
  let next = 0;
  let spans = 0;
  let retries = 0;
  const headers = { 'content-type': encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json' };
  const sender = async () => {
    for (let i = next++; i < batches.length; i = next++) {
      for (;;) {
        const status = await postTraces(svc, encoding === 'protobuf' ? batches[i].protobuf : batches[i].json, headers);
        if (status === 200) break;
        if (status !== 429 && status !== 503) throw new Error(`unexpected ${status}`);
        retries++;
        await new Promise((r) => setTimeout(r, 100));
      }
      spans += batches[i].spans;
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: senders }, sender));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { spans, seconds, rate: spans / seconds, retries };
}
