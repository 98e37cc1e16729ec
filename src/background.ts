import { iso } from './domain/time.js';
import { startOutboxWorker } from './services/mail-worker.js';
import type { ServiceDeps } from './services/context.js';
import { startPushAnnouncer } from './services/push.js';
import { startWebhookWorker } from './services/webhook-worker.js';
import { sweepExpiredCounters } from './store/counters-repo.js';
import { sweepExpiredIdempotencyKeys } from './store/idempotency-repo.js';
import { sweepNotices } from './store/push-repo.js';
import { sweepRevokedSessions } from './store/sessions-repo.js';

export interface Background {
  stop(): Promise<void>;
}

/** How often expired rows (rate-limit windows, old daily caps, idempotency records, signed-out sessions) are deleted. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Long-running work beside the HTTP server: the mail outbox worker and housekeeping of expired
 * counters. Started by server.ts after listening; tests start it when they need it. stop() waits
 * for a mail in flight, so a shutdown never cuts a send in half.
 */
export async function startBackground(deps: ServiceDeps): Promise<Background> {
  const worker = startOutboxWorker(deps, deps.config.mail);
  // New tasks and messages to the operator's subscribed devices (Web Push), from the change feed.
  const stopPush = startPushAnnouncer(deps);
  const webhooks = startWebhookWorker(deps);
  const sweep = async () => {
    try {
      const now = iso(deps.clock.now());
      await sweepExpiredCounters(deps.store.db, now);
      await sweepExpiredIdempotencyKeys(deps.store.db, now);
      await sweepRevokedSessions(deps.store.db, now);
      await sweepNotices(deps.store.db, iso(new Date(deps.clock.now().getTime() - 7 * 86_400_000)));
    } catch (error) {
      deps.log.warn({ err: error }, 'housekeeping: sweeping expired counters failed');
    }
  };
  const sweeper = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  sweeper.unref();
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        clearInterval(sweeper);
        stopPush();
        await Promise.all([worker.stop(), webhooks.stop()]);
      })();
      return stopping;
    },
  };
}
