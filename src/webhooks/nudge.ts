/**
 * An in-process hint from the code that queues a webhook to this instance's worker, so an event
 * goes out without waiting for the next poll. Only a hint: polling is what makes delivery certain
 * (other instances' rows, restarts, a nudge that arrived before the commit). One per app, built
 * in the composition root.
 */
export class Nudge {
  private listener: (() => void) | undefined;

  /** Registers the one listener; returns its removal. */
  on(listener: () => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  fire(): void {
    this.listener?.();
  }
}
