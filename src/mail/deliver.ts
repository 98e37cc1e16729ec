import type { Logger } from 'pino';
import type { AbuseDeps } from '../abuse/context.js';
import { consumeEmailCap, dailyEmailCapKey } from '../abuse/quotas.js';
import type { MailSettings } from '../config.js';
import { iso, nextUtcMidnight, utcDay } from '../domain/time.js';
import { incrementCounter } from '../store/counters-repo.js';
import { loadMailAttachments } from './attachments.js';
import type { MailDeps } from './context.js';
import { describeSendError, isPermanentRejection, logSafeError, responseCodeOf } from './errors.js';
import { markFailed, markSent, postpone, scheduleRetry, type OutboxRow } from './queue.js';
import { headerText, isSafeAddress, maskAddress } from './sanitize.js';
import type { MailTransport } from './transport.js';

/**
 * Sending one claimed mail: take a unit of the daily e-mail cap (or postpone to the next UTC day),
 * send, and record the outcome. Failures are retried with exponential backoff capped at
 * `retryMaxMs`, so a mail goes out soon after SMTP comes back; only a permanent 5xx rejection or
 * `maxAttempts` failures mark it failed. The loop that claims and paces is services/scheduler.ts.
 */

export interface DeliveryContext {
  deps: Pick<MailDeps, 'config' | 'store' | 'clock'> & Pick<AbuseDeps, 'config' | 'clock'>;
  log: Logger;
  transport: MailTransport;
  /** The claim token of this worker run. */
  token: string;
  settings: Pick<MailSettings, 'maxAttempts' | 'retryBaseMs' | 'retryMaxMs'>;
  /** Delay before the next attempt after n failed ones (scheduler.retryDelayMs). */
  retryDelayMs(failedAttempts: number): number;
  /** The UTC day the cap warning was last logged (one warning a day). */
  capWarnedDay?: string;
}

export async function deliverOne(ctx: DeliveryContext, row: OutboxRow): Promise<void> {
  const { deps, log, transport, token } = ctx;
  const context = { outbox_id: row.id, kind: row.kind, to: maskAddress(row.recipient), attempt: Number(row.attempts) + 1 };
  const takenAt = deps.clock.now();
  if (!(await consumeEmailCap(deps.store.db, deps))) {
    const resume = nextUtcMidnight(takenAt);
    await postpone(deps, row, token, resume);
    if (ctx.capWarnedDay !== utcDay(takenAt)) {
      ctx.capWarnedDay = utcDay(takenAt);
      log.warn({ ...context, resume_at: iso(resume), cap: deps.config.limits.dailyEmailCap }, 'outbox: daily e-mail cap reached; mail waits for the next UTC day');
    }
    return;
  }
  try {
    if (!isSafeAddress(row.recipient)) throw new Error('recipient is not a plain e-mail address');
    // The row holds no file bytes: a delivery mail's files are loaded (frozen, signed) at send time.
    const attachments = row.kind === 'task_delivered' && row.task_id !== null ? await loadMailAttachments(deps.store.db, row.task_id) : [];
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
      attachments,
    });
  } catch (error) {
    await refundEmailCap(ctx, takenAt);
    await recordFailure(ctx, row, error, context);
    return;
  }
  if (await markSent(deps, row, token)) log.info({ ...context, via: transport.name }, 'outbox: mail sent');
  else log.warn(context, 'outbox: mail sent after this worker lost its claim; it may go out twice');
}

async function recordFailure(ctx: DeliveryContext, row: OutboxRow, error: unknown, context: Record<string, unknown>): Promise<void> {
  const { deps, log, token } = ctx;
  const attempts = Number(row.attempts) + 1;
  const reason = describeSendError(error);
  const details = { ...context, response_code: responseCodeOf(error), error: logSafeError(error) };
  if (isPermanentRejection(error) || attempts >= ctx.settings.maxAttempts) {
    await markFailed(deps, row, token, reason);
    log.error(details, 'outbox: mail failed for good; the operator can retry it from the outbox');
    return;
  }
  const retryAt = new Date(deps.clock.now().getTime() + ctx.retryDelayMs(attempts));
  await scheduleRetry(deps, row, token, reason, retryAt);
  // An outage fails every attempt: warn on the first and then now and again, not every 30 s.
  const level = attempts === 1 || attempts % 20 === 0 ? 'warn' : 'debug';
  log[level]({ ...details, retry_at: iso(retryAt) }, 'outbox: send failed; will retry');
}

/** The cap counts mail that went out: a failed attempt gives its unit back. */
async function refundEmailCap(ctx: DeliveryContext, takenAt: Date): Promise<void> {
  const expires = iso(new Date(nextUtcMidnight(takenAt).getTime() + 86_400_000));
  await incrementCounter(ctx.deps.store.db, dailyEmailCapKey(takenAt), expires, -1);
}
