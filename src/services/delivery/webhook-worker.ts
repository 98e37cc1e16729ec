import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { iso } from '../../domain/time.js';
import { extendLease } from '../../store/delivery/leased-queue.js';
import { claimDueWebhooks, releaseWebhookClaim } from '../../store/delivery/webhooks-repo.js';
import { type DeliveryContext, deliverOne } from '../../webhooks/deliver.js';
import { createTargetResolver } from '../../webhooks/target.js';
import type { ServiceDeps } from '../context.js';
import { type Scheduler, startScheduler } from './scheduler.js';

/**
 * The webhook worker: LANES copies of the mail worker's scheduler (services/delivery/scheduler.ts), each
 * claiming one due event at a time under a lease and handing it to webhooks/deliver.ts. Each
 * delivery is bounded by WEBHOOK_TIMEOUT_MS, so a receiver that hangs holds one lane for that long
 * and the others keep delivering: concurrency is bounded by the lane count.
 */

export const LANES = 4;

export interface WebhookWorker {
  /** Stops claiming and waits for the deliveries in flight (each ends within its timeout). */
  stop(): Promise<void>;
}

export function startWebhookWorker(deps: ServiceDeps, options: { lanes?: number; leaseMs?: number } = {}): WebhookWorker {
  const log = deps.log.child({ component: 'webhooks' });
  const settings = deps.config.webhooks;
  // Short (MAIL_LEASE_MS) and renewed by the scheduler's heartbeat while a delivery runs, so a
  // crashed worker's event is picked up by another instance within seconds.
  const leaseMs = options.leaseMs ?? deps.config.mail.leaseMs;
  const token = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const context: DeliveryContext = {
    store: deps.store,
    clock: deps.clock,
    log,
    settings,
    token,
    resolveTarget: createTargetResolver({ dnsServers: deps.config.dnsServers, dnsTimeoutMs: deps.config.dnsTimeoutMs, allowPrivate: settings.allowPrivate }),
    signatureAgent: new URL(deps.config.baseUrl).origin,
  };
  const lanes: Scheduler[] = [];
  for (let lane = 0; lane < (options.lanes ?? LANES); lane++) {
    lanes.push(
      startScheduler({
        name: 'webhooks',
        log,
        pollMs: deps.config.mail.pollMs,
        wakeDelayMs: 25,
        claim: async () => {
          const now = deps.clock.now();
          const [row] = await claimDueWebhooks(deps.store, token, 1, iso(now), iso(new Date(now.getTime() + leaseMs)));
          return row;
        },
        run: (row) => deliverOne(context, row),
        release: (row) => releaseWebhookClaim(deps.store.db, row.id, token),
        wake: deps.webhookNudge,
        heartbeat: {
          everyMs: Math.max(100, Math.floor(leaseMs / 3)),
          renew: (row) => extendLease(deps.store.db, 'webhook_outbox', row.id, token, iso(new Date(deps.clock.now().getTime() + leaseMs))),
        },
      }),
    );
  }
  log.info({ lanes: lanes.length }, 'webhooks: worker started');
  return {
    async stop() {
      await Promise.all(lanes.map((lane) => lane.stop()));
      log.info('webhooks: worker stopped');
    },
  };
}
