import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { consumeEmailCap, dailyEmailCapKey } from '../abuse/quotas.js';
import type { MailSettings } from '../config.js';
import { iso, nextUtcMidnight, utcDay } from '../domain/time.js';
import type { ServiceDeps } from '../services/deps.js';
import { incrementCounter } from '../store/counters.js';
import { describeSendError, isPermanentRejection, logSafeError, responseCodeOf } from './errors.js';
import { claimDue, markFailed, markSent, postpone, release, scheduleRetry, type OutboxRow } from './queue.js';
import { headerText, isSafeAddress, maskAddress } from './sanitize.js';
import { createMailTransport, type MailTransport } from './transport.js';
import { onOutboxWake } from './wake.js';

/**
 * The outbox worker: polls for due mail, claims one row at a time under a lease, takes a unit of
 * the daily e-mail cap, sends, and records the outcome. Failures are retried with exponential
 * backoff capped at `retryMaxMs`, so a mail goes out soon after SMTP comes back; only a permanent
 * 5xx rejection or `maxAttempts` failures mark it failed. Every due time comes from deps.clock;
 * real timers only pace the polling.
 */

export interface OutboxWorkerOptions extends MailSettings {
  /** How long a claim holds before another worker may take the row (a crashed worker's claim expires). */
  leaseMs?: number;
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

export const DEFAULT_LEASE_MS = 120_000;

/** Delay before attempt n+1 after n failed attempts: base, 2·base, 4·base …, at most max. */
export function retryDelayMs(failedAttempts: number, settings: Pick<MailSettings, 'retryBaseMs' | 'retryMaxMs'>): number {
  return Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, failedAttempts - 1));
}

export function startOutboxWorker(deps: ServiceDeps, options: OutboxWorkerOptions): OutboxWorker {
  const log = deps.log.child({ component: 'outbox' });
  const transport = options.transport ?? createMailTransport(deps.config);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const wakeDelayMs = options.wakeDelayMs ?? 25;
  // Names this run's claims; a restarted process is a new run and never mistakes old claims for its own.
  const token = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let capWarnedDay: string | undefined;

  function schedule(ms: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void run(), ms);
  }

  async function run(): Promise<void> {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = drain();
    await running;
    running = undefined;
    schedule(again ? 0 : options.pollMs);
    again = false;
  }

  /** Sends due mail until none is left (or the worker stops). */
  async function drain(): Promise<void> {
    try {
      while (!stopped) {
        const [row] = await claimDue(deps, token, 1, leaseMs);
        if (!row) return;
        if (stopped) {
          await release(deps, row, token);
          return;
        }
        try {
          await deliver(row);
        } catch (error) {
          // A store error mid-delivery: hand the row back now rather than when the lease runs out.
          await release(deps, row, token).catch(() => undefined);
          throw error;
        }
      }
    } catch (error) {
      // The store is unreachable or a query failed: log and try again at the next poll.
      log.error({ err: error }, 'outbox: worker pass failed');
    }
  }

  async function deliver(row: OutboxRow): Promise<void> {
    const context = { outbox_id: row.id, kind: row.kind, to: maskAddress(row.recipient), attempt: Number(row.attempts) + 1 };
    const takenAt = deps.clock.now();
    if (!(await consumeEmailCap(deps.store.db, deps))) {
      const resume = nextUtcMidnight(takenAt);
      await postpone(deps, row, token, resume);
      if (capWarnedDay !== utcDay(takenAt)) {
        capWarnedDay = utcDay(takenAt);
        log.warn({ ...context, resume_at: iso(resume), cap: deps.config.limits.dailyEmailCap }, 'outbox: daily e-mail cap reached; mail waits for the next UTC day');
      }
      return;
    }
    try {
      if (!isSafeAddress(row.recipient)) throw new Error('recipient is not a plain e-mail address');
      await transport.send({
        id: row.id,
        kind: row.kind,
        from: deps.config.mailFrom,
        to: row.recipient,
        replyTo: isSafeAddress(row.reply_to) ? row.reply_to : null,
        subject: headerText(row.subject),
        text: row.text_body,
        html: row.html_body,
        createdAt: row.created_at,
        inReplyTo: row.in_reply_to,
      });
    } catch (error) {
      await refundEmailCap(takenAt);
      await recordFailure(row, error, context);
      return;
    }
    if (await markSent(deps, row, token)) log.info({ ...context, via: transport.name }, 'outbox: mail sent');
    else log.warn(context, 'outbox: mail sent after this worker lost its claim; it may go out twice');
  }

  async function recordFailure(row: OutboxRow, error: unknown, context: Record<string, unknown>): Promise<void> {
    const attempts = Number(row.attempts) + 1;
    const reason = describeSendError(error);
    const details = { ...context, response_code: responseCodeOf(error), error: logSafeError(error) };
    if (isPermanentRejection(error) || attempts >= options.maxAttempts) {
      await markFailed(deps, row, token, reason);
      log.error(details, 'outbox: mail failed for good; the operator can retry it from the outbox');
      return;
    }
    const retryAt = new Date(deps.clock.now().getTime() + retryDelayMs(attempts, options));
    await scheduleRetry(deps, row, token, reason, retryAt);
    // An outage fails every attempt: warn on the first and then now and again, not every 30 s.
    const level = attempts === 1 || attempts % 20 === 0 ? 'warn' : 'debug';
    log[level]({ ...details, retry_at: iso(retryAt) }, 'outbox: send failed; will retry');
  }

  /** The cap counts mail that went out: a failed attempt gives its unit back. */
  async function refundEmailCap(takenAt: Date): Promise<void> {
    const expires = iso(new Date(nextUtcMidnight(takenAt).getTime() + 86_400_000));
    await incrementCounter(deps.store.db, dailyEmailCapKey(takenAt), expires, -1);
  }

  const stopWaking = onOutboxWake(deps, () => {
    if (stopped) return;
    if (running) again = true;
    else schedule(wakeDelayMs);
  });
  log.info({ via: transport.name, poll_ms: options.pollMs }, 'outbox: worker started');
  schedule(0);

  return {
    transport,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopWaking();
      if (timer) clearTimeout(timer);
      await running;
      transport.close();
      log.info('outbox: worker stopped');
    },
  };
}
