/**
 * An in-process nudge from the code that queues mail to this instance's worker, so a new mail
 * goes out without waiting for the next poll. Only a hint: the worker's polling is what makes
 * delivery certain (other instances' rows, restarts, a nudge that arrived before the commit).
 * One per application, built in src/deps.ts.
 */
export class OutboxWake {
  private listener: (() => void) | undefined;

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
