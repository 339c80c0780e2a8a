import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { TraceKey } from '../../spans/stored-spans.js';
import { finishClaims, releaseClaims, type Claim } from './settle-queue.js';

/**
 * Rounds of this process whose end did not reach PostgreSQL: a failed round whose release failed
 * too, or a settled round (rows written, hooks run) whose finish failed — the store failing, or a
 * statement timing out on a loaded machine. Their rows stay claimed by the round's token, and
 * nobody else may take them until the lease (SETTLE_LEASE_MS) runs out: a minute late. So the
 * settler tries each again at its next attempts, until it succeeds or the lease has surely run out
 * (the rows are then free for any settler anyway).
 *
 * Ending a round by its token is right whenever it comes: a row another settler took after the lease
 * ran out carries that settler's token and is left alone; a release only frees rows; a finish deletes
 * only the rows whose `seq` did not move since the claim (they were settled with every span, and
 * their hooks ran) and frees the others.
 */
export class UnendedClaims {
  /** By round token: the claims to finish (null: to release), and when the lease has surely run out. */
  private readonly rounds = new Map<string, { finish: Claim[] | null; until: number }>();

  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.rounds.size;
  }

  /** A round given up whose release failed. Its lease was last set before now: it runs out within `leaseMs` from now. */
  release(token: string): void {
    this.rounds.set(token, { finish: null, until: this.now() + this.leaseMs });
  }

  /** A settled round whose finish failed: finished later, so it is not settled (nor its hooks run) again. */
  finish(token: string, claims: Claim[]): void {
    this.rounds.set(token, { finish: claims, until: this.now() + this.leaseMs });
  }

  /**
   * Tries to end every round held, one statement each; a round that fails stays for the next call
   * unless its lease has run out. Returns the traces whose claims finished (their queue rows are gone)
   * and the first failure.
   */
  async end(sql: SqlHandle): Promise<{ finished: TraceKey[]; failure: { error: unknown } | null }> {
    const finished: TraceKey[] = [];
    let failure: { error: unknown } | null = null;
    for (const [token, round] of this.rounds) {
      try {
        if (round.finish) finished.push(...(await finishClaims(sql, token, round.finish)));
        else await releaseClaims(sql, token);
        this.rounds.delete(token);
      } catch (error) {
        if (this.now() > round.until) this.rounds.delete(token);
        failure ??= { error };
      }
    }
    return { finished, failure };
  }
}
