import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { MailSettings } from '../config.js';
import { CapUnits } from '../mail/cap-units.js';
import { type DeliveryContext, deliverOne } from '../mail/deliver.js';
import { claimDue, extendLease, extendLeases, type OutboxRow, release, SentMarks } from '../mail/queue.js';
import { createMailTransport, type MailTransport } from '../mail/transport.js';
import type { ServiceDeps } from './context.js';
import { retryDelayMs, startScheduler } from './scheduler.js';

/**
 * The outbox worker: the generic scheduler (services/scheduler.ts) handing due mails one at a time
 * to mail/deliver.ts. Mails are claimed under a lease in batches (CLAIM_PER_SLOT per sending slot,
 * one statement; the leases of those not started yet renewed together) and marked sent in batches
 * (SentMarks), so a busy outbox costs a few statements per batch rather than two commits per mail. Every due time comes from deps.clock; real timers only pace the
 * polling.
 */

/** Mails claimed per sending slot in one statement. */
const CLAIM_PER_SLOT = 8;

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
  // Claimed, not handed to the scheduler yet; their leases are renewed together with the running
  // mails' heartbeat, in one statement, and a row whose claim was lost meanwhile is dropped.
  let claimed: { rows: OutboxRow[] } = { rows: [] };
  const renewClaimed = setInterval(
    () => {
      const rows = claimed.rows;
      if (rows.length === 0) return;
      extendLeases(deps, rows, token, leaseMs)
        .then((held) => {
          claimed.rows = claimed.rows.filter((row) => held.has(row.id) || !rows.includes(row));
        })
        .catch((error: unknown) => log.warn({ err: error }, 'outbox: renewing claimed mail failed'));
    },
    Math.max(100, Math.floor(leaseMs / 3)),
  ).unref();
  const giveBack = async () => {
    const rows = claimed.rows.splice(0);
    for (const row of rows) await release(deps, row, token);
  };
  const takeClaimed = (kinds: readonly string[]): OutboxRow[] => {
    const taken = claimed.rows.filter((row) => kinds.includes(row.kind));
    claimed.rows = claimed.rows.filter((row) => !kinds.includes(row.kind));
    return taken;
  };
  const sent = new SentMarks(deps, token);
  const capUnits = new CapUnits(deps.store.db, deps.config.limits.dailyEmailCap);
  const giveBackCap = () =>
    capUnits.giveBack().catch((error: unknown) => log.warn({ err: error }, 'outbox: could not give back e-mail cap units; they count as used today'));
  const delivery: DeliveryContext = {
    deps,
    log,
    transport,
    token,
    settings: options,
    leaseMs,
    sent,
    capUnits,
    takeClaimed,
    retryDelayMs: (n) => retryDelayMs(n, options),
  };
  const claim = async (): Promise<OutboxRow | undefined> => {
    if (claimed.rows.length === 0) claimed = { rows: await claimDue(deps, token, CLAIM_PER_SLOT * Math.max(1, options.concurrency), leaseMs) };
    const next = claimed.rows.shift();
    // Nothing more to send: the cap units held go back, so the day's count is what went out.
    if (next === undefined) await giveBackCap();
    return next;
  };
  const scheduler = startScheduler({
    name: 'outbox',
    log,
    pollMs: options.pollMs,
    wakeDelayMs: options.wakeDelayMs ?? 25,
    claim,
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
      clearInterval(renewClaimed);
      await sent.drain();
      await giveBackCap();
      await giveBack().catch((error: unknown) => log.warn({ err: error }, 'outbox: could not give back claimed mail; it is free again when its lease ends'));
      transport.close();
      log.info('outbox: worker stopped');
    },
  };
}
