import { agentRunRequest } from './otlp-json.js';

/**
 * Steady OTLP/JSON ingest the way an exporter sends it: `senders` loops, each posting one agent run
 * (root, two generations, one tool call: four spans) at a time, re-sending the same batch after a
 * retryable answer (429/503, Retry-After honoured up to `maxBackoffMs`) and giving up on a request
 * after the exporter's default 10 s timeout. Every answer is recorded with its latency, and every
 * run answered 200 is remembered, for the exact count of what was acknowledged.
 */
export interface Answer {
  status: number;
  code: string | null;
  retryAfter: string | null;
  ms: number;
  at: number;
}

export const SPANS_PER_RUN = 4;
export const GENERATIONS_PER_RUN = 2;
export const EXPORTER_TIMEOUT_MS = 10_000;

export class SteadySender {
  readonly answers: Answer[] = [];
  /** OTel trace ids of the runs answered 200. */
  readonly acknowledged = new Set<string>();
  /** Requests the 10 s exporter timeout cut (no answer at all). */
  hung = 0;
  private running = true;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly key: string,
    private readonly projectId: string,
    private readonly options: { senders?: number; maxBackoffMs?: number } = {},
  ) {}

  start(): void {
    for (let i = 0; i < (this.options.senders ?? 3); i++) this.loops.push(this.loop());
  }

  /** Stops sending once every run in hand is acknowledged (a run is never abandoned half-way). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Answers received since `since` (epoch ms). */
  answersSince(since: number): Answer[] {
    return this.answers.filter((a) => a.at >= since);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const { body, traceId } = agentRunRequest({
        start: new Date(Date.now() - 60_000),
        agent: 'steady',
        generations: [
          { model: 'gpt-4o', input: 100, output: 10 },
          { model: 'gpt-4o-mini', input: 50, output: 5 },
        ],
        tools: [{ name: 'search' }],
      });
      // The same batch until it is acknowledged, as an exporter retries it.
      for (;;) {
        const answer = await this.post(body);
        if (answer?.status === 200) {
          this.acknowledged.add(traceId);
          break;
        }
        if (answer && answer.status !== 429 && answer.status !== 503) throw new Error(`ingest answered ${answer.status} (${answer.code})`);
        const retryAfterMs = answer?.retryAfter ? Number(answer.retryAfter) * 1000 : 200;
        await new Promise((r) => setTimeout(r, Math.min(retryAfterMs, this.options.maxBackoffMs ?? 500)));
      }
    }
  }

  private async post(body: string): Promise<Answer | null> {
    const started = Date.now();
    try {
      const res = await fetch(`${this.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.key}`, 'x-lookout-project': this.projectId },
        body,
        signal: AbortSignal.timeout(EXPORTER_TIMEOUT_MS),
      });
      const text = await res.text();
      let code: string | null = null;
      try {
        code = res.status === 200 ? null : (JSON.parse(text).code ?? null);
      } catch {
        code = null;
      }
      const answer = { status: res.status, code, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started, at: started };
      this.answers.push(answer);
      return answer;
    } catch {
      this.hung++;
      return null;
    }
  }
}
