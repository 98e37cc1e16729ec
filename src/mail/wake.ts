import type { OutboxRow } from '../store/delivery/outbox-repo.js';

/**
 * Where the code that queues mail meets this instance's worker, one per application (built in
 * src/deps.ts):
 *
 * - a nudge (`wake`), so a mail queued in the store goes out without waiting for the next poll.
 *   Only a hint: the worker's polling is what makes delivery certain (other instances' rows,
 *   restarts, a nudge that arrived before the commit);
 * - a hand-over (`adopter`): while a worker runs here, mail is queued already claimed by it, and
 *   the rows are handed to it in memory once their transaction has committed (mail/outbox.ts), so
 *   it does not claim them again: a claim was a write of every row, the body included. A row
 *   that was queued but never handed over (the process died) is free again when its lease ends.
 */
export class OutboxWake {
  private listener: (() => void) | undefined;
  /** The running worker's hand-over, if any. */
  adopter: OutboxAdopter | undefined;

  /** Sets the worker's listener; returns a function that removes it. */
  listen(wake: () => void): () => void {
    this.listener = wake;
    return () => {
      if (this.listener === wake) this.listener = undefined;
    };
  }

  wake(): void {
    this.listener?.();
  }
}

/** A worker that takes mail queued under its claim. */
export interface OutboxAdopter {
  /**
   * The claim a mail queued now is written under (the worker run's token and the lease's end), or
   * undefined when the worker holds enough mail in memory already: the mail is queued unclaimed.
   */
  claim(): { claim_token: string; locked_until: string } | undefined;
  /** Takes rows written under that claim, once committed. */
  take(rows: OutboxRow[]): void;
}
