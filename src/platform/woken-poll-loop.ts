export interface WokenPollLoopOptions {
  /** The sleep between rounds when a round names none, and the base of the failure backoff. */
  pollMs: number;
  /** One round of work. It may return how long to sleep before the next round (default `pollMs`). */
  round: () => Promise<number | void>;
  /** A round threw: the loop goes on after a backoff; this says what happened. */
  onError: (error: unknown) => void;
  /** The longest backoff after repeated failures (a store down for minutes). */
  maxBackoffMs?: number;
}

/**
 * A background loop that runs a round of work, then sleeps until its timer fires or someone kicks
 * it — whichever comes first. The outbox relay and the webhook deliverer run on one: a commit that
 * gives them work kicks them, so they answer at once, and the timer catches what a kick cannot see
 * (another process's commit, a retry coming due).
 *
 * Kicks during a round are not lost: the next round starts at once instead of sleeping, and any
 * number of kicks in one round wake it once. A failing round backs off exponentially (pollMs × 2^n,
 * up to `maxBackoffMs`) and the loop continues. stop() waits for the round in progress and cancels
 * the sleep, so it returns as soon as that round does.
 */
export class WokenPollLoop {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;

  constructor(private readonly options: WokenPollLoopOptions) {}

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Wakes the loop now, or makes the round in progress run again as soon as it ends. */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** Stops after the round in progress (if any); no round starts after this resolves. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }

  private async run(): Promise<void> {
    const { pollMs, round, onError } = this.options;
    const maxBackoffMs = this.options.maxBackoffMs ?? 30_000;
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      let delay = pollMs;
      try {
        delay = (await round()) ?? pollMs;
        failures = 0;
      } catch (error) {
        failures++;
        onError(error);
        delay = Math.min(maxBackoffMs, pollMs * 2 ** Math.min(failures, 6));
      }
      if (!this.running) break;
      if (this.kicked) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }
}
