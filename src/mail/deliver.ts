import type { Logger } from 'pino';
import type { AbuseDeps } from '../abuse/context.js';
import { consumeEmailCap, emailCapUsed, returnEmailCap } from '../abuse/quotas.js';
import type { MailSettings } from '../config.js';
import { randomHex } from '../domain/ids.js';
import { iso, nextUtcMidnight, utcDay } from '../domain/time.js';
import { loadMailAttachments } from './attachments.js';
import type { CapUnits } from './cap-units.js';
import type { MailDeps } from './context.js';
import { describeSendError, isPermanentRejection, logSafeError, responseCodeOf } from './errors.js';
import { claimRank, DIGEST_KIND, digestMail, isNotification, NOTIFICATION_KINDS, notificationShare, notificationVerdict } from './priority.js';
import { bundleIntoDigest, claimDue, markFailed, type OutboxRow, postpone, type SentMarks, scheduleRetry } from './queue.js';
import { headerText, isSafeAddress, maskAddress } from './sanitize.js';
import type { MailTransport } from './transport/transport.js';

/**
 * Sending one claimed mail: take a unit of the daily e-mail cap (or postpone to the next UTC day),
 * send, and record the outcome. Failures are retried with exponential backoff capped at
 * `retryMaxMs`, so a mail goes out soon after SMTP comes back; only a permanent 5xx rejection or
 * `maxAttempts` failures mark it failed. The loop that claims and paces is services/delivery/scheduler.ts.
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
  /** The claim lease, for the notifications a digest claims. */
  leaseMs: number;
  /** Where sent mails are marked, in batches. */
  sent: SentMarks;
  /** Units of the daily e-mail cap held by this worker (mail/cap-units.ts). */
  capUnits: CapUnits;
  /** Takes the mails of these kinds this worker claimed but has not started (a digest bundles them too). */
  takeClaimed(kinds: readonly string[]): OutboxRow[];
}

/** Notifications bundled into one digest at most. */
const DIGEST_MAX = 200;

function logContext(row: OutboxRow): Record<string, unknown> {
  return { outbox_id: row.id, kind: row.kind, to: maskAddress(row.recipient), attempt: Number(row.attempts) + 1 };
}

/**
 * Before a claimed mail is handed to a sending slot: its unit of the daily cap, taken at `takenAt`
 * (see takeCapUnit). False when the mail was postponed to the next UTC day or bundled into a
 * digest instead. The worker admits mails one at a time, in claim order, while many are being
 * sent: near the cap each decision reads the count, and a digest bundles the claimed mails that
 * no slot has started.
 */
export function admit(ctx: DeliveryContext, row: OutboxRow, takenAt: Date): Promise<boolean> {
  return ctx.capUnits.inTurn(() => takeCapUnit(ctx, row, takenAt, logContext(row)));
}

/** Gives back the cap unit of an admitted mail that was not sent (the worker stopped first). */
export function unadmit(ctx: DeliveryContext, takenAt: Date): Promise<void> {
  return returnEmailCap(ctx.deps.store.db, takenAt, 1);
}

/** Sends an admitted mail and records the outcome; a failed attempt gives its cap unit back. */
export async function deliverOne(ctx: DeliveryContext, row: OutboxRow, takenAt: Date): Promise<void> {
  const { deps, log, transport } = ctx;
  const context = logContext(row);
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
      inReplyTo: row.in_reply_to,
      attachments,
    });
  } catch (error) {
    // The cap counts mail that went out: a failed attempt gives its unit back.
    await returnEmailCap(deps.store.db, takenAt, 1);
    await recordFailure(ctx, row, error, context);
    return;
  }
  // Not awaited: the slot goes on to its next mail while this one's mark waits for its batch (the
  // row stays claimed under its lease until then; the worker drains the marks when it stops).
  void ctx.sent.mark(row).then(
    (marked) => {
      if (marked) log.info({ ...context, via: transport.name }, 'outbox: mail sent');
      else log.warn(context, 'outbox: mail sent after this worker lost its claim; it may go out twice');
    },
    (error: unknown) => log.warn({ ...context, err: error }, 'outbox: mail sent but not marked; it goes out again when its claim runs out'),
  );
}

/**
 * Takes the cap unit a mail needs: requester mail may use the whole cap, notifications only their
 * share (mail/priority.ts), bundled into a digest at its last unit. False when the mail was
 * postponed to the next UTC day or bundled instead.
 */
async function takeCapUnit(ctx: DeliveryContext, row: OutboxRow, takenAt: Date, context: Record<string, unknown>): Promise<boolean> {
  const { deps, log, token } = ctx;
  const cap = deps.config.limits.dailyEmailCap;
  if (await ctx.capUnits.take(row.kind, takenAt)) return true;
  // Near the cap, and for a digest: one unit at a time, read against the share.
  if (isNotification(row.kind)) {
    const verdict = notificationVerdict(row.kind, await emailCapUsed(deps.store.db, takenAt), cap);
    if (verdict === 'digest') {
      await digest(ctx, row, context);
      return false;
    }
    if (verdict === 'send' && (await consumeEmailCap(deps.store.db, deps, notificationShare(cap)))) return true;
  } else if (await consumeEmailCap(deps.store.db, deps)) {
    return true;
  }
  const resume = nextUtcMidnight(takenAt);
  await postpone(deps, row, token, resume);
  if (ctx.capWarnedDay !== utcDay(takenAt)) {
    ctx.capWarnedDay = utcDay(takenAt);
    log.warn({ ...context, resume_at: iso(resume), cap }, 'outbox: daily e-mail cap reached; mail waits for the next UTC day');
  }
  return false;
}

/** Bundles this notification and every other due one into one digest mail to the operator. */
async function digest(ctx: DeliveryContext, row: OutboxRow, context: Record<string, unknown>): Promise<void> {
  const { deps, log, token } = ctx;
  const kinds = NOTIFICATION_KINDS.filter((kind) => kind !== DIGEST_KIND);
  const mine = ctx.takeClaimed(kinds).slice(0, DIGEST_MAX - 1);
  const others = mine.length < DIGEST_MAX - 1 ? await claimDue(deps, token, DIGEST_MAX - 1 - mine.length, ctx.leaseMs, kinds) : [];
  const rows = [row, ...mine, ...others];
  const parts = digestMail(
    deps.config.baseUrl,
    rows.map((r) => ({ subject: r.subject, text: r.text_body, created_at: r.created_at })),
  );
  const at = iso(deps.clock.now());
  const id = `mail-${randomHex(16)}`;
  await bundleIntoDigest(deps, token, rows, {
    id,
    kind: DIGEST_KIND,
    recipient: row.recipient,
    reply_to: null,
    subject: headerText(parts.subject),
    text_body: parts.text,
    html_body: parts.html,
    task_id: null,
    message_id: null,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    locked_until: null,
    last_error: null,
    created_at: at,
    sent_at: null,
    claim_rank: claimRank(DIGEST_KIND),
  });
  log.warn({ ...context, bundled: rows.length, digest_id: id }, 'outbox: daily e-mail cap is near; notifications bundled into one digest');
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
