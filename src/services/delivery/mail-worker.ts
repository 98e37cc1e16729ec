import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { MailSettings } from '../../config.js';
import { iso } from '../../domain/time.js';
import { CapUnits } from '../../mail/cap-units.js';
import { admit, type DeliveryContext, deliverOne, unadmit } from '../../mail/deliver.js';
import { claimDue, extendLease, extendLeases, type OutboxRow, release, SentMarks } from '../../mail/queue.js';
import { createMailTransport, type MailTransport } from '../../mail/transport/transport.js';
import type { OutboxAdopter } from '../../mail/wake.js';
import type { ServiceDeps } from '../context.js';
import { retryDelayMs, startScheduler, type WakeSource } from './scheduler.js';

/**
 * The outbox worker: the generic scheduler (services/delivery/scheduler.ts) handing due mails one at a time
 * to mail/deliver.ts. Mail queued in this process while the worker runs is written under its claim
 * and handed to it after the commit (mail/wake.ts); other mail is claimed under a lease in batches
 * (CLAIM_PER_SLOT per sending slot, one statement). The leases of mails not started yet are renewed
 * together, and sent mails are marked in batches (SentMarks), so a busy outbox costs a few
 * statements per batch rather than two commits per mail. Every due time comes from deps.clock;
 * real timers only pace the polling.
 */

/** Mails claimed per sending slot in one statement, and at most in one claim. */
const CLAIM_PER_SLOT = 8;
const CLAIM_MAX = 256;
/**
 * Mails in flight per SMTP connection. A send waits for the transport's answer, which comes back
 * through this thread's event loop: under a flood of submissions a turn of it takes ~15 ms, so a
 * slot per connection sent at most one mail a turn (4 connections: ~250 a second). The transport
 * queues what its connections cannot take yet.
 */
const SENDS_PER_CONNECTION = 16;
/**
 * Mail held in memory (claimed, not started) beyond which mail queued here is written unclaimed,
 * for a claim from the store: what the worker holds is renewed in one statement.
 */
const HANDOVER_MAX = 1024;
/** How long the worker finds no mail before it gives its unused cap units back. */
const CAP_IDLE_MS = 1000;

export { retryDelayMs } from './scheduler.js';

/** A claimed mail with its cap unit, handed to a sending slot. */
interface Job {
  row: OutboxRow;
  takenAt: Date;
  started: boolean;
}

export interface OutboxWorkerOptions extends MailSettings {
  /** Delay between an enqueue's nudge and the look for mail, so the enqueuing transaction has committed. */
  wakeDelayMs?: number;
  /** Defaults to SMTP over SMTP_URL, or .eml files without it. */
  transport?: MailTransport;
  /** Mail held in memory beyond which mail queued here is written unclaimed (default HANDOVER_MAX). */
  handoverMax?: number;
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
  // Claimed, not handed to the scheduler yet, in claim order (claim_rank, then as they came): rows
  // claimed from the store and rows queued here under this worker's claim (mail/wake.ts). Their
  // leases are renewed together with the running mails' heartbeat, in one statement, and a row
  // whose claim was lost meanwhile is dropped.
  const claimed: OutboxRow[] = [];
  const add = (rows: OutboxRow[]) => {
    for (const row of rows) {
      let at = claimed.length;
      while (at > 0 && (claimed[at - 1]?.claim_rank ?? 0) > row.claim_rank) at -= 1;
      claimed.splice(at, 0, row);
    }
  };
  /** Keeps the claimed rows that pass `test`; returns the others. */
  const keep = (test: (row: OutboxRow) => boolean): OutboxRow[] => {
    const kept: OutboxRow[] = [];
    const dropped: OutboxRow[] = [];
    for (const row of claimed) (test(row) ? kept : dropped).push(row);
    if (dropped.length > 0) claimed.splice(0, claimed.length, ...kept);
    return dropped;
  };
  const renewClaimed = setInterval(
    () => {
      if (claimed.length === 0) return;
      const rows = new Set(claimed);
      extendLeases(deps, [...rows], token, leaseMs)
        .then((held) => keep((row) => held.has(row.id) || !rows.has(row)))
        .catch((error: unknown) => log.warn({ err: error }, 'outbox: renewing claimed mail failed'));
    },
    Math.max(100, Math.floor(leaseMs / 3)),
  ).unref();
  const giveBack = async () => {
    const rows = claimed.splice(0);
    for (const row of rows) await release(deps, row, token);
  };
  const takeClaimed = (kinds: readonly string[]): OutboxRow[] => keep((row) => !kinds.includes(row.kind));
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
  const slots = Math.max(1, options.concurrency) * SENDS_PER_CONNECTION;
  const claimSize = Math.min(CLAIM_MAX, CLAIM_PER_SLOT * slots);
  // When to claim from the store: when mail was queued there (a wake), when the last claim came
  // back full (more may be due), and every pollMs even while mail handed over here keeps the
  // worker busy (retries falling due, other instances' and earlier runs' mail). A pass that has
  // handed out what it holds ends without a claim that finds nothing (a write transaction).
  let lookInStore = true;
  let lastStoreClaim = Number.NEGATIVE_INFINITY;
  // When the worker last found no mail; its cap units go back once it has been idle a while.
  let idleSince: number | undefined;
  // The scheduler claims one job at a time: each mail is admitted (its cap unit) in claim order,
  // before a slot starts it (mail/deliver.ts admit).
  const claim = async (): Promise<Job | undefined> => {
    for (;;) {
      const now = performance.now();
      if ((claimed.length === 0 && lookInStore) || now - lastStoreClaim >= options.pollMs) {
        lookInStore = false;
        lastStoreClaim = now;
        const rows = await claimDue(deps, token, claimSize, leaseMs);
        if (rows.length === claimSize) lookInStore = true;
        add(rows);
      }
      const row = claimed.shift();
      if (row === undefined) {
        await idle();
        return undefined;
      }
      idleSince = undefined;
      const takenAt = deps.clock.now();
      if (await admit(delivery, row, takenAt)) return { row, takenAt, started: false };
    }
  };
  /**
   * No mail right now. The cap units held go back once the worker has found none for
   * CAP_IDLE_MS, so at rest the day's count is the mail that went out; a worker that keeps up
   * with a flood finds the outbox empty between batches, and gave its block back (and took
   * another) every time.
   */
  const idle = async () => {
    const now = performance.now();
    idleSince ??= now;
    if (now - idleSince >= CAP_IDLE_MS) await giveBackCap();
  };
  // A wake from the code that queued mail in the store; mail handed over (below) wakes the
  // scheduler without a look in the store.
  let nudge: (() => void) | undefined;
  const wake: WakeSource = {
    listen(listener) {
      nudge = listener;
      const stopListening = deps.outboxWake.listen(() => {
        lookInStore = true;
        listener();
      });
      return () => {
        nudge = undefined;
        stopListening();
      };
    },
  };
  let stopped = false;
  const adopter: OutboxAdopter = {
    claim: () =>
      stopped || claimed.length >= (options.handoverMax ?? HANDOVER_MAX)
        ? undefined
        : { claim_token: token, locked_until: iso(new Date(deps.clock.now().getTime() + leaseMs)) },
    take(rows) {
      if (stopped) return;
      // A row whose lease runs out before the next renewal (a long transaction) stays in the
      // store, where a claim takes it once the lease has ended.
      const renewedBy = iso(new Date(deps.clock.now().getTime() + leaseMs / 3));
      add(rows.filter((row) => (row.locked_until ?? '') > renewedBy));
      nudge?.();
    },
  };
  deps.outboxWake.adopter = adopter;
  const scheduler = startScheduler<Job>({
    name: 'outbox',
    log,
    pollMs: options.pollMs,
    wakeDelayMs: options.wakeDelayMs ?? 25,
    claim,
    run: (job) => {
      job.started = true;
      return deliverOne(delivery, job.row, job.takenAt);
    },
    release: async (job) => {
      // Never sent: its cap unit goes back (a started one gave its own back when its send failed).
      if (!job.started) await unadmit(delivery, job.takenAt);
      await release(deps, job.row, token);
    },
    wake,
    concurrency: slots,
    heartbeat: { everyMs: Math.max(100, Math.floor(leaseMs / 3)), renew: (job) => extendLease(deps, job.row, token, leaseMs) },
  });
  log.info({ via: transport.name, poll_ms: options.pollMs }, 'outbox: worker started');

  return {
    transport,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (deps.outboxWake.adopter === adopter) deps.outboxWake.adopter = undefined;
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
