import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible server on 127.0.0.1 for tests that run real client libraries and their
 * instrumentations: POST /v1/chat/completions answers each request with the next scripted reply and
 * a usage block as OpenAI sends it (prompt, completion, cached and reasoning token details). A reply
 * is either text or one tool call. Every request body is kept for the test to look at.
 */

export type FakeReply = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

export interface FakeUsage {
  prompt: number;
  completion: number;
  cached: number;
  reasoning?: number;
}

export interface FakeOpenAI {
  /** Base URL for an OpenAI client: http://127.0.0.1:<port>/v1 */
  baseURL: string;
  requests: Record<string, any>[];
  /** Replies for the next requests, in order (the last one repeats). */
  script(replies: FakeReply[], usage: FakeUsage): void;
  close(): Promise<void>;
}

export const FAKE_MODEL = 'gpt-4o-mini-2024-07-18';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let replies: FakeReply[] = [{ text: 'ok' }];
  let usage: FakeUsage = { prompt: 10, completion: 2, cached: 0 };
  let next = 0;
  const requests: Record<string, any>[] = [];
  const server: Server = createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const parsed = JSON.parse(body);
    requests.push(parsed);
    const reply = replies[Math.min(next++, replies.length - 1)];
    const message =
      'text' in reply
        ? { role: 'assistant', content: reply.text, refusal: null }
        : {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: `call_${next}`, type: 'function', function: { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments) } }],
          };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${next}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: FAKE_MODEL,
        choices: [{ index: 0, message, logprobs: null, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
        system_fingerprint: 'fp_fake',
      }),
    );
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script(r, u) {
      replies = r;
      usage = u;
      next = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
