import type { ServiceDeps } from './services/context.js';
import { startOutboxWorker } from './services/mail-worker.js';
import { startPushAnnouncer } from './services/push.js';
import { runRetention } from './services/retention.js';
import { startWebhookWorker } from './services/webhook-worker.js';
import { isStoreFault } from './store/faults.js';

export interface Background {
  stop(): Promise<void>;
}

/** The first retention run waits this long after start, so a starting fleet does not run it at once. */
const RETENTION_FIRST_DELAY_MS = 60_000;

/**
 * Long-running work beside the HTTP server: the mail outbox worker, the webhook worker and
 * retention (which also deletes expired counters, idempotency records and signed-out sessions),
 * every RETENTION_INTERVAL_MINUTES. Started by server.ts after listening; tests start it when they
 * need it. stop() waits for a mail or webhook in flight and for retention's current batch, so a
 * shutdown cuts none of them in half.
 */
export async function startBackground(deps: ServiceDeps): Promise<Background> {
  const worker = startOutboxWorker(deps, deps.config.mail);
  // New tasks and messages to the operator's subscribed devices (Web Push), from the change feed.
  const stopPush = startPushAnnouncer(deps);
  const webhooks = startWebhookWorker(deps);
  let running: Promise<void> | undefined;
  let stopped = false;
  const retain = () => {
    // One run at a time in this process; other instances are kept out by the store's lock.
    running ??= runRetention(deps, { stopping: () => stopped })
      .then(() => undefined)
      .catch((error: unknown) => {
        if (isStoreFault(error)) deps.metrics.storeErrors.inc();
        deps.log.warn({ err: error }, 'retention run failed; next run retries');
      })
      .finally(() => {
        running = undefined;
      });
  };
  for (const name of ['mail', 'webhooks', 'retention']) deps.workers.started(name);
  const first = setTimeout(retain, Math.min(RETENTION_FIRST_DELAY_MS, deps.config.retention.intervalMs));
  const every = setInterval(retain, deps.config.retention.intervalMs);
  first.unref();
  every.unref();
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        stopped = true;
        for (const name of ['mail', 'webhooks', 'retention']) deps.workers.stopped(name);
        clearTimeout(first);
        clearInterval(every);
        stopPush();
        await Promise.all([worker.stop(), webhooks.stop(), running]);
      })();
      return stopping;
    },
  };
}
