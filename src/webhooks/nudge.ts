/**
 * An in-process hint from the code that queues a webhook to this instance's worker, so an event
 * goes out without waiting for the next poll. Only a hint: polling is what makes delivery certain
 * (other instances' rows, restarts, a nudge that arrived before the commit). One per app, built
 * in the composition root; it is a WakeSource of services/delivery/scheduler.ts.
 */
export class Nudge {
  // Several: each delivery lane of the worker listens.
  private readonly listeners = new Set<() => void>();

  /** Adds a listener; returns its removal. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  fire(): void {
    for (const listener of this.listeners) listener();
  }
}
