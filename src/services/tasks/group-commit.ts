/**
 * Group commit: work items that arrive together are committed together, in one transaction (one
 * fsync on SQLite, one round of statements on PostgreSQL), and each caller is answered only after
 * that commit. While a batch commits, new items queue; the next batch takes them all (up to
 * `maxBatch`). Under load batches grow by themselves; alone, an item waits only for the next turn
 * of the event loop.
 *
 * Between two batches the event loop gets a turn (setImmediate). On SQLite a batch's transaction and
 * the answers to its callers run in one go, without giving the loop back, so a batch of 50 held up
 * every status read and console page that arrived meanwhile; there the batch is capped at
 * `SQLITE_MAX_BATCH` and what queued beyond it waits one turn (docs/performance.md, "Batches cut
 * for the readers"). On PostgreSQL the loop runs while a batch's statements travel, and batches of
 * up to `POSTGRES_MAX_BATCH` save round trips.
 *
 * `commit` returns one outcome per item, in order: an item refused by its own rules is an outcome,
 * not an exception, so it never fails its neighbours. When `commit` throws, a store fault (the
 * store cannot answer) fails the whole batch at once (each caller gets its 503 without waiting for
 * the others' timeouts); anything else (a bug one item triggers) has the batch's items committed
 * again one at a time, so that only the item at fault gets the error.
 */
import type { DialectName } from '../../store/db.js';
import { isStoreFault } from '../../store/faults.js';

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Waiting<U, R> {
  item: U;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/** The largest batch on SQLite: its transaction and answers hold the event loop (see above). */
export const SQLITE_MAX_BATCH = 16;
/** The largest batch on PostgreSQL. */
export const POSTGRES_MAX_BATCH = 256;

/** The largest batch for a store (see above). */
export function maxBatchFor(dialect: DialectName): number {
  return dialect === 'sqlite' ? SQLITE_MAX_BATCH : POSTGRES_MAX_BATCH;
}

export class GroupCommit<U, R> {
  private queue: Waiting<U, R>[] = [];
  private running = false;

  constructor(
    private readonly commit: (items: U[]) => Promise<Outcome<R>[]>,
    private readonly maxBatch = POSTGRES_MAX_BATCH,
  ) {}

  /** Resolves with the item's outcome once the transaction that holds it has committed. */
  submit(item: U): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running) return;
      this.running = true;
      // The rest of this turn's requests join the first batch too.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        this.settle(batch, await this.commit(batch.map((w) => w.item)));
      } catch (error) {
        if (batch.length === 1 || isStoreFault(error)) for (const waiting of batch) waiting.reject(error);
        else for (const waiting of batch) await this.alone(waiting);
      }
      // The answers just settled go out, and requests that arrived meanwhile are read, before the
      // next batch.
      if (this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    this.running = false;
  }

  private async alone(waiting: Waiting<U, R>): Promise<void> {
    try {
      this.settle([waiting], await this.commit([waiting.item]));
    } catch (error) {
      waiting.reject(error);
    }
  }

  private settle(batch: Waiting<U, R>[], outcomes: Outcome<R>[]): void {
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome ? outcome.error : new Error('group commit: no outcome for an item'));
    });
  }
}
