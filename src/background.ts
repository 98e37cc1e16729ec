import { startPushAnnouncer } from './services/alerts/push.js';
import { startHeldCommitter } from './services/console/held-actions.js';
import type { ServiceDeps } from './services/context.js';
import { startOutboxWorker } from './services/delivery/mail-worker.js';
import { startWebhookWorker } from './services/delivery/webhook-worker.js';
import { startLogSequencer, startLogTimestamper } from './services/receipt-log/receipt-log.js';
import { startDevOperator } from './services/runtime/dev-operator.js';
import { startPeriodic } from './services/runtime/periodic.js';
import { runRetention } from './services/runtime/retention.js';
import { startDeadlineSweep } from './services/tasks/deadlines.js';

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
  // Development profile only (DEV_AUTO_OPERATOR): a no-op otherwise.
  const stopDevOperator = startDevOperator(deps);
  // Passed deadlines (docs/questions.md): swept at start, so one that passed while the service was down is handled now.
  const stopDeadlines = startDeadlineSweep(deps);
  // Console actions held for undo (docs/inbox.md): committed when their window passes, also after a restart.
  const stopHeld = startHeldCommitter(deps);
  // The public receipt log (docs/receipt-log.md): waiting leaves integrated and a new checkpoint signed within 2 s.
  const stopSequencer = startLogSequencer(deps);
  // Trusted time (TSA_URL): each new checkpoint time-stamped; a TSA fault delays only that.
  const stopTimestamper = startLogTimestamper(deps);
  // The first retention run waits a while, so a starting fleet does not run it at once.
  const stopRetention = startPeriodic(deps, {
    name: 'retention run',
    firstDelayMs: Math.min(RETENTION_FIRST_DELAY_MS, deps.config.retention.intervalMs),
    intervalMs: deps.config.retention.intervalMs,
    run: (stopping) => runRetention(deps, { stopping }),
  });
  for (const name of ['mail', 'webhooks', 'retention']) deps.workers.started(name);
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        for (const name of ['mail', 'webhooks', 'retention']) deps.workers.stopped(name);
        stopPush();
        stopDevOperator();
        await Promise.all([worker.stop(), webhooks.stop(), stopRetention(), stopDeadlines(), stopHeld(), stopSequencer(), stopTimestamper()]);
      })();
      return stopping;
    },
  };
}
