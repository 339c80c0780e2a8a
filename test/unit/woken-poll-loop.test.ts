import { afterEach, describe, expect, it } from 'vitest';
import { WokenPollLoop } from '../../src/platform/woken-poll-loop.js';

/**
 * The loop under the outbox relay and the webhook deliverer, on real timers. Waits are generous
 * (the machine running the tests is loaded): a "long" poll is a minute, so anything that happens
 * within a few seconds happened because of a kick, a returned delay or a backoff, not the timer.
 */

const LONG_POLL_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** A round that blocks until released, counting how many rounds started. */
function gatedRounds() {
  const state = { started: 0, finished: 0, release: () => {} };
  const round = async () => {
    state.started++;
    await new Promise<void>((resolve) => {
      state.release = resolve;
    });
    state.finished++;
  };
  return { state, round };
}

const loops: WokenPollLoop[] = [];
function loopOf(options: ConstructorParameters<typeof WokenPollLoop>[0]): WokenPollLoop {
  const loop = new WokenPollLoop(options);
  loops.push(loop);
  return loop;
}

afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
});

describe('WokenPollLoop', () => {
  it('runs a round at start, then sleeps until the timer fires', async () => {
    let rounds = 0;
    const loop = loopOf({ pollMs: 30, round: async () => void rounds++, onError: () => {} });
    loop.start();
    await until(() => rounds >= 3);
    expect(loop.isRunning).toBe(true);
  });

  it('wakes from its sleep at a kick', async () => {
    let rounds = 0;
    const loop = loopOf({ pollMs: LONG_POLL_MS, round: async () => void rounds++, onError: () => {} });
    loop.start();
    await until(() => rounds === 1);
    await sleep(50);
    expect(rounds).toBe(1);
    loop.kick();
    await until(() => rounds === 2);
  });

  it('coalesces kicks during a round into one more round, then sleeps', async () => {
    const { state, round } = gatedRounds();
    const loop = loopOf({ pollMs: LONG_POLL_MS, round, onError: () => {} });
    loop.start();
    await until(() => state.started === 1);
    for (let i = 0; i < 5; i++) loop.kick();
    state.release();
    // The kicks arrived while the round ran: the next round starts without waiting for the timer.
    await until(() => state.started === 2);
    state.release();
    await until(() => state.finished === 2);
    await sleep(300);
    // Five kicks, one extra round: the loop is asleep again.
    expect(state.started).toBe(2);
  });

  it('stop() while a round runs waits for that round and starts no other', async () => {
    const { state, round } = gatedRounds();
    const loop = loopOf({ pollMs: 10, round, onError: () => {} });
    loop.start();
    await until(() => state.started === 1);
    loop.kick();
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    expect(loop.isRunning).toBe(false);
    await sleep(100);
    // The round in progress is not abandoned: stop() waits for it.
    expect(stopped).toBe(false);
    state.release();
    await stopping;
    expect(state.finished).toBe(1);
    await sleep(100);
    // Neither the kick nor the 10 ms timer started another round after stop().
    expect(state.started).toBe(1);
  });

  it('stop() during the sleep returns without waiting for the timer', async () => {
    let rounds = 0;
    const loop = loopOf({ pollMs: LONG_POLL_MS, round: async () => void rounds++, onError: () => {} });
    loop.start();
    await until(() => rounds === 1);
    const began = Date.now();
    await loop.stop();
    expect(Date.now() - began).toBeLessThan(5_000);
    loop.kick();
    await sleep(50);
    expect(rounds).toBe(1);
  });

  it('sleeps for the delay a round returns', async () => {
    let rounds = 0;
    const loop = loopOf({
      pollMs: LONG_POLL_MS,
      round: async () => {
        rounds++;
        return 20;
      },
      onError: () => {},
    });
    loop.start();
    await until(() => rounds >= 3);
  });

  it('reports a failing round, backs off and keeps going', async () => {
    const errors: unknown[] = [];
    let rounds = 0;
    const loop = loopOf({
      pollMs: 10,
      round: async () => {
        rounds++;
        if (rounds <= 2) throw new Error(`round ${rounds} failed`);
      },
      onError: (error) => errors.push(error),
    });
    loop.start();
    // Failures back off 20 ms then 40 ms; the third round succeeds and the loop carries on.
    await until(() => rounds >= 4);
    expect(errors.map((error) => (error as Error).message)).toEqual(['round 1 failed', 'round 2 failed']);
  });

  it('caps the backoff at maxBackoffMs', async () => {
    const errors: unknown[] = [];
    const loop = loopOf({
      pollMs: 10,
      maxBackoffMs: 15,
      round: async () => {
        throw new Error('down');
      },
      onError: (error) => errors.push(error),
    });
    loop.start();
    // Uncapped, twelve failures would take 4.4 s (20, 40, … 640 ms, then 640 ms each); capped at 15 ms, well under a second.
    await until(() => errors.length >= 12, 2_500);
  });
});
