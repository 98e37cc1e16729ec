import { html } from '../domain/html.js';
import { headerText } from './sanitize.js';
import { documentHtml, type MailParts, quoteHtml } from './templates/layout.js';

/**
 * Mail priorities under the daily e-mail cap (docs/mail.md, "Priorities and the cap").
 *
 * - Mail to a requester about their own task (acceptance, delivery, rejection, replies, …) is
 *   `requester` mail: claimed before any notification and allowed the whole cap.
 * - Mail to the operator (new task, new message, digests) is a `notification`: claimed after
 *   requester mail, and charged to the cap first — it may use only the cap less a reserve kept for
 *   requesters. While more than one unit of that share is left, notifications go out one by one;
 *   at the last unit, every due notification is bundled into one digest; past it they wait for
 *   the next UTC day.
 * A new kind of operator mail must be added to NOTIFICATION_KINDS.
 */

export const DIGEST_KIND = 'operator_digest';
export const NOTIFICATION_KINDS: readonly string[] = ['task_submitted', 'message_received', DIGEST_KIND, 'question_answered', 'deadline_passed'];

export function isNotification(kind: string): boolean {
  return NOTIFICATION_KINDS.includes(kind);
}

/** The outbox's claim order (its `claim_rank`): requester mail first, operator notifications after. */
export const CLAIM_RANKS = [0, 1] as const;

export function claimRank(kind: string): number {
  return isNotification(kind) ? 1 : 0;
}

/** Units of the daily cap kept for requester mail: a quarter, at least one (none when the cap is 0). */
export function requesterReserve(cap: number): number {
  return cap <= 0 ? 0 : Math.max(1, Math.ceil(cap / 4));
}

/** How many units of the daily cap notifications may use. */
export function notificationShare(cap: number): number {
  return Math.max(0, cap - requesterReserve(cap));
}

export type NotificationVerdict = 'send' | 'digest' | 'wait';

/** What to do with a notification when `used` units of today's cap are spent. */
export function notificationVerdict(kind: string, used: number, cap: number): NotificationVerdict {
  const share = notificationShare(cap);
  if (used >= share) return 'wait';
  if (kind === DIGEST_KIND || used < share - 1) return 'send';
  return 'digest';
}

/** What a digest lists of each notification it bundles. */
export interface DigestItem {
  subject: string;
  text: string;
  created_at: string;
}

/** One mail to the operator standing in for several notifications. */
export function digestMail(baseUrl: string, items: DigestItem[]): MailParts {
  const subject = `Digest: ${items.length} notifications while the daily e-mail cap is nearly used up`;
  // A bundled message's own mail had Reply-To its sender; this one cannot have one for each.
  const intro =
    `The daily e-mail cap is nearly used up, so ${items.length} notifications are bundled here; mail to requesters keeps the rest of the cap. ` +
    `Everything is also in the console: ${baseUrl}/operator. Replying to this digest reaches no sender: answer a message from the console (${baseUrl}/operator/messages) or write to the address under its "Reply to".`;
  const text = [intro, '', ...items.flatMap((item, i) => [`${i + 1}. ${headerText(item.subject)} (${item.created_at})`, item.text.slice(0, 2000), ''])].join(
    '\n',
  );
  const body = html`<p>${intro}</p>
${items.map((item) => html`<h3>${headerText(item.subject)}</h3><p>${item.created_at}</p>${quoteHtml(item.text.slice(0, 2000))}`)}`;
  return { subject, text, html: documentHtml('Digest', body) };
}
