import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminMessage, AdminTaskDetail, MessageReply } from '../../../domain/tasks/admin-schemas.js';
import type { Session } from '../auth/session.js';
import { csrfField, relative, senderLabel, WITHDRAWAL, when } from '../layout.js';

/**
 * The task page's conversation block (contract "Talking with the operator"): the messages naming
 * the task, the operator's replies under each, a reply form per message, the one-click
 * withdrawal, and blocking the sender. Kept apart from task.ts so the task page's other blocks
 * (attachments, webhooks) change without touching this one.
 */

/** The rejection reason of a withdrawal, word for word as the contract gives it. */
export const WITHDRAWN_REASON = 'Withdrawn at the requester’s request.';

export const asksWithdrawal = (m: Pick<AdminMessage, 'subject' | 'message'>) => WITHDRAWAL.test(`${m.subject ?? ''} ${m.message}`);

function mailto(address: string): string {
  return `mailto:${encodeURIComponent(address).replace(/%40/g, '@')}`;
}

/** A reply form under a message; `taskId` is where the console returns after sending (else the messages list). */
export function replyForm(taskId: string | null, m: Pick<AdminMessage, 'message_id'>, session: Session): SafeHtml {
  const id = `reply-${m.message_id}`;
  return html`<form class="action reply" method="post" action="/operator/messages/${m.message_id}/reply">
    ${csrfField(session)}
    ${taskId ? html`<input type="hidden" name="task_id" value="${taskId}">` : ''}
    <div class="field">
      <label for="${id}">Reply <span class="hint">— mailed to the sender, threaded under this message</span></label>
      <textarea id="${id}" name="message" rows="3" maxlength="10000" required></textarea>
    </div>
    <div class="row end"><button class="btn secondary" type="submit">Send reply</button></div>
  </form>`;
}

/** The operator's earlier replies under a message, oldest first. */
export function repliesList(replies: readonly MessageReply[], now: Date): SafeHtml {
  if (replies.length === 0) return html``;
  return html`<ul class="replies">${replies.map((r) => html`<li><span class="sub">You replied ${when(r.created_at, now)}</span><p class="prose">${r.message}</p></li>`)}</ul>`;
}

/**
 * The messages naming the task, each with one reply box behind its own "Reply" (a <details>; the
 * boxes share a name, so opening one closes the others) and "Mark done" while it waits.
 */
export function conversation(task: AdminTaskDetail, session: Session, now: Date, done: ReadonlyMap<string, string | null> = new Map()): SafeHtml {
  const list = task.messages;
  if (list.length === 0) return html`<p class="sub">No message names this task.</p>`;
  return html`<ul class="messages">${list.map((m) => {
    const waiting = (done.get(m.message_id) ?? null) === null;
    return html`<li class="quote" id="m-${m.message_id}">
      <div class="message-head"><strong>${m.subject ?? 'No subject'}</strong>${asksWithdrawal(m) ? html` <span class="badge danger">Withdrawal?</span>` : ''}${waiting ? html` <span class="badge warn">Waiting</span>` : ''}<span class="sub">${relative(m.created_at, now)}</span></div>
      <p class="prose">${m.message}</p>
      <p class="sub">From ${senderLabel(m)}${m.reply_to ? html` · <a href="${mailto(m.reply_to)}">write from your mail</a>` : ''}</p>
      ${repliesList(m.replies ?? [], now)}
      <div class="row msg-actions">
        ${m.reply_to ? html`<details class="reply-box" name="reply"><summary class="btn secondary small">Reply</summary>${replyForm(task.task_id, m, session)}</details>` : ''}
        ${
          waiting
            ? html`<form method="post" action="/operator/messages/${m.message_id}/done">${csrfField(session)}<input type="hidden" name="task_id" value="${task.task_id}"><button class="btn ghost small" type="submit">Mark done</button></form>`
            : ''
        }
      </div>
    </li>`;
  })}</ul>`;
}

/** One click when the requester asked: reject with the contract's reason. */
export function withdrawForm(task: AdminTaskDetail, session: Session): SafeHtml {
  const open = task.status === 'submitted' || task.status === 'accepted';
  if (!open || !task.messages.some(asksWithdrawal)) return html``;
  return html`<form class="action withdraw" method="post" action="/operator/tasks/${task.task_id}/withdraw" data-confirm="Withdraw this task? It is rejected with the reason “${WITHDRAWN_REASON}”">
    ${csrfField(session)}
    <h3>The requester asked to withdraw it</h3>
    <p class="sub">Rejects the task with the reason “${WITHDRAWN_REASON}”</p>
    <div class="row end"><button class="btn danger" type="submit">Withdraw task</button></div>
  </form>`;
}

export interface BlockDraft {
  kind?: string | undefined;
  reason?: string | undefined;
}

/** Block the sender of this task by client, e-mail, domain or requester, with a reason. */
export function blockSenderForm(task: AdminTaskDetail, session: Session, draft: BlockDraft = {}): SafeHtml {
  const domain = task.contact_email ? task.contact_email.slice(task.contact_email.lastIndexOf('@') + 1) : null;
  const options: [string, string, boolean][] = [
    ['ip', 'Its client (the address it came from)', true],
    ['email', task.contact_email ? 'Its contact e-mail (under Details)' : 'Its contact e-mail (none given)', Boolean(task.contact_email)],
    ['domain', domain ? `Its e-mail domain: ${domain}` : 'Its e-mail domain (none given)', Boolean(domain)],
    ['requester', task.requester ? 'Its requester (as shown above)' : 'Its requester (none given)', Boolean(task.requester)],
    ['agent_key', task.agent ? "Its verified agent's signing key" : 'Its signing key (the task was not signed)', task.agent !== null],
    [
      'agent_directory',
      task.agent ? `Every agent of its key directory: ${task.agent.directory}` : 'Its key directory (the task was not signed)',
      task.agent !== null,
    ],
  ];
  const chosen = draft.kind ?? 'ip';
  return html`<section class="card" aria-labelledby="blk">
    <h2 id="blk">Block the sender</h2>
    <form class="action" method="post" action="/operator/tasks/${task.task_id}/block" data-confirm="Block this sender? New tasks and messages from it are refused.">
      ${csrfField(session)}
      <fieldset>
        <legend>Block</legend>
        ${options.map(
          ([value, label, usable]) =>
            html`<label class="choice"><input type="radio" name="kind" value="${value}"${value === chosen ? html` checked` : ''}${usable ? '' : html` disabled`}> <span>${label}</span></label>`,
        )}
      </fieldset>
      <div class="field">
        <label for="block-reason">Reason <span class="hint">— kept on the blocklist</span></label>
        <input id="block-reason" name="reason" type="text" maxlength="400" value="${draft.reason ?? ''}">
      </div>
      <div class="row end"><button class="btn danger" type="submit">Block sender</button></div>
    </form>
  </section>`;
}
