import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got, as it came over the wire. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers a request with; `hang` never answers (a dead receiver). */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  hang?: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests for a path (receivers are told apart by path). */
  at(path: string): Received[];
  /** Decides each reply; the default answers 200. */
  reply: (req: Received, seen: number) => Reply;
  /** Waits until `count` requests reached `path`. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 for the webhook tests: it records every request and answers as told. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received,
    at: (path) => received.filter((r) => r.path === path),
    reply: () => ({ status: 200 }),
    async waitFor(path, count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.at(path).length < count) {
        if (Date.now() > deadline) throw new Error(`receiver ${path}: ${receiver.at(path).length} of ${count} requests after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return receiver.at(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      const reply = receiver.reply(entry, receiver.at(entry.path).length);
      if (reply.hang) {
        hanging.add(res);
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...(reply.headers ?? {}) });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
