/**
 * Reads that must see submitted deletes as applied before the engine applied them
 * (apply_mutations_on_fly = 1): the writer's duplicate check and settling's read-back, so the rows
 * of a failed flush, whose delete is pending (lightweight-delete.ts), are never taken for stored.
 *
 * With that setting the engine evaluates every unfinished mutation of the columns it reads, the
 * deletes and anyone else's updates alike. A mutation that cannot apply — an `ALTER … UPDATE` whose
 * expression throws for some row, which the engine retries for ever — then fails the read as well,
 * and with it every flush, until an operator kills that mutation (docs/operations.md). So a read the
 * engine answers with an error is made once more without the setting: ingest and settling go on,
 * and the one thing lost meanwhile is the on-the-fly view of pending deletes (a re-send of spans
 * whose failed flush's delete has not applied yet is taken for already stored). The failed read is
 * counted with the other failed statements (lookout_clickhouse_statement_errors_total, by its
 * error code); the first fallback is logged as a warning naming the error, and the first read
 * that succeeds with the setting again is logged too, so the log shows when it began and ended.
 *
 * A store that is not there (an unavailable-store error) or a time limit is not an answer about the
 * setting: those fail as they are, without a second read.
 */
import type { Logger } from 'pino';
import { HttpError } from '../http/errors.js';
import { unavailableStore } from '../store-errors.js';
import type { StatementSettings } from './sql/compile.js';

const MUTATIONS_ON_FLY: StatementSettings = { apply_mutations_on_fly: 1 };

/**
 * Loggers (one per reader: the writer, the settler) that told of a fallback now going on: one
 * warning when it begins and one line when it ends, not one per read.
 */
const fallingBack = new WeakSet<Logger>();

/**
 * Runs `read` with apply_mutations_on_fly = 1 among its settings; when the engine refuses it with
 * an error of its own, runs `read` again without (the second read's error, if any, is thrown).
 */
export async function readWithMutationsOnFly<T>(
  logger: Logger | undefined,
  what: string,
  read: (settings: StatementSettings) => Promise<T>,
): Promise<T> {
  let answer: T;
  try {
    answer = await read(MUTATIONS_ON_FLY);
  } catch (error) {
    if (error instanceof HttpError || unavailableStore(error) !== null) throw error;
    answer = await read({});
    if (logger && !fallingBack.has(logger)) {
      fallingBack.add(logger);
      logger.warn(
        { err: error, read: what },
        'a ClickHouse read with pending mutations applied failed and was made without them: an unfinished mutation that cannot apply is likely stuck (see system.mutations, latest_fail_reason; KILL MUTATION ends it); until then a re-send of spans whose failed flush is being deleted may be taken for stored',
      );
    }
    return answer;
  }
  if (logger && fallingBack.delete(logger)) logger.warn({ read: what }, 'ClickHouse reads with pending mutations applied work again');
  return answer;
}
