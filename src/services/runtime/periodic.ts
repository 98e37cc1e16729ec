import { isStoreFault } from '../../store/faults.js';
import type { ServiceDeps } from '../context.js';

/**
 * A background run repeated on a timer (retention, the deadline sweep): one run at a time in this
 * process (other instances are kept out by the run's own store lock), a failure logged and retried
 * at the next tick, and a stop that waits for the run in flight. `stopping()` lets a run end
 * between batches.
 */
export function startPeriodic(
  deps: Pick<ServiceDeps, 'log' | 'metrics'>,
  options: { name: string; firstDelayMs: number; intervalMs: number; run: (stopping: () => boolean) => Promise<unknown> },
): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    running ??= options
      .run(() => stopped)
      .then(() => undefined)
      .catch((error: unknown) => {
        if (isStoreFault(error)) deps.metrics.storeErrors.inc();
        deps.log.warn({ err: error }, `${options.name} failed; the next run retries`);
      })
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(tick, options.firstDelayMs);
  const every = setInterval(tick, options.intervalMs);
  first.unref();
  every.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(every);
    await running;
  };
}
