import type { ServiceDeps } from '../services/deps.js';

/**
 * An in-process nudge from the code that queues mail to this instance's worker, so a new mail
 * goes out without waiting for the next poll. Only a hint: the worker's polling is what makes
 * delivery certain (other instances' rows, restarts, a nudge that arrived before the commit).
 */
const wakers = new WeakMap<ServiceDeps, () => void>();

export function onOutboxWake(deps: ServiceDeps, wake: () => void): () => void {
  wakers.set(deps, wake);
  return () => {
    if (wakers.get(deps) === wake) wakers.delete(deps);
  };
}

export function wakeOutbox(deps: ServiceDeps): void {
  wakers.get(deps)?.();
}
