import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { MailSettings } from '../config.js';
import { type DeliveryContext, deliverOne } from '../mail/deliver.js';
import { claimDue, extendLease, release } from '../mail/queue.js';
import { createMailTransport, type MailTransport } from '../mail/transport.js';
import type { ServiceDeps } from './context.js';
import { retryDelayMs, startScheduler } from './scheduler.js';

/**
 * The outbox worker: the generic scheduler (services/scheduler.ts) claiming one due mail at a time
 * under a lease and handing it to mail/deliver.ts. Every due time comes from deps.clock; real
 * timers only pace the polling.
 */

export { retryDelayMs } from './scheduler.js';

export interface OutboxWorkerOptions extends MailSettings {
  /** Delay between an enqueue's nudge and the look for mail, so the enqueuing transaction has committed. */
  wakeDelayMs?: number;
  /** Defaults to SMTP over SMTP_URL, or .eml files without it. */
  transport?: MailTransport;
}

export interface OutboxWorker {
  readonly transport: MailTransport;
  /** Stops polling, waits for the send in flight, and releases nothing half-done. */
  stop(): Promise<void>;
}

export function startOutboxWorker(deps: ServiceDeps, options: OutboxWorkerOptions): OutboxWorker {
  const log = deps.log.child({ component: 'outbox' });
  const transport = options.transport ?? createMailTransport(deps.config);
  // Short, and renewed by a heartbeat while a mail is being sent (MAIL_LEASE_MS).
  const leaseMs = options.leaseMs;
  // Names this run's claims; a restarted process is a new run and never mistakes old claims for its own.
  const token = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const delivery: DeliveryContext = { deps, log, transport, token, settings: options, leaseMs, retryDelayMs: (n) => retryDelayMs(n, options) };
  const scheduler = startScheduler({
    name: 'outbox',
    log,
    pollMs: options.pollMs,
    wakeDelayMs: options.wakeDelayMs ?? 25,
    claim: async () => (await claimDue(deps, token, 1, leaseMs))[0],
    run: (row) => deliverOne(delivery, row),
    release: async (row) => {
      await release(deps, row, token);
    },
    wake: deps.outboxWake,
    concurrency: options.concurrency,
    heartbeat: { everyMs: Math.max(100, Math.floor(leaseMs / 3)), renew: (row) => extendLease(deps, row, token, leaseMs) },
  });
  log.info({ via: transport.name, poll_ms: options.pollMs }, 'outbox: worker started');

  let stopped = false;
  return {
    transport,
    async stop() {
      if (stopped) return;
      stopped = true;
      await scheduler.stop();
      transport.close();
      log.info('outbox: worker stopped');
    },
  };
}
