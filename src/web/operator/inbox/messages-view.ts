import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminMessage, MessageReply } from '../../../domain/tasks/admin-schemas.js';
import type { NamedTask } from '../../../services/messages/states.js';
import type { Session } from '../auth/session.js';
import { at, csrfField, senderLabel, statusPill, taskTitle } from '../layout.js';
import { asksWithdrawal, repliesList, replyForm } from '../talk/talk-view.js';

/**
 * The messages page as an inbox (docs/inbox.md): grouped by the task they are about and,
 * within, by sender; each message waiting, answered or done, with one reply box at a time (a
 * <details> per message, exclusive by name), "Mark done", and "Withdraw task" on a withdrawal.
 */

export interface MessagesViewOptions {
  messages: AdminMessage[];
  show: 'waiting' | 'all';
  waitingTotal: number;
  session: Session;
  replies: Map<string, MessageReply[]>;
  /** When each message was done (null: waiting). */
  done: Map<string, string | null>;
  tasks: Map<string, NamedTask>;
  now: Date;
  /** The message whose reply box is open (?reply=). */
  replyTo?: string | undefined;
  notice?: SafeHtml | undefined;
  next?: string | null;
}

interface Group {
  taskId: string | null;
  senders: Map<string, AdminMessage[]>;
}

/** By task (the first one a message names), then by sender address; newest group first. */
function grouped(messages: AdminMessage[]): Group[] {
  const groups = new Map<string, Group>();
  for (const m of messages) {
    const taskId = m.task_ids[0] ?? null;
    const key = taskId ?? '';
    const group = groups.get(key) ?? { taskId, senders: new Map() };
    groups.set(key, group);
    const sender = m.reply_to || m.from || '';
    group.senders.set(sender, [...(group.senders.get(sender) ?? []), m]);
  }
  return [...groups.values()];
}

/** A task id that never breaks mid-id: shortened, whole in its title. */
function shortId(taskId: string): SafeHtml {
  return html`<span class="mono nobreak" title="${taskId}">${taskId.length > 18 ? `${taskId.slice(0, 17)}…` : taskId}</span>`;
}

function state(m: AdminMessage, options: MessagesViewOptions): SafeHtml {
  const done = options.done.get(m.message_id) ?? null;
  if (done === null) return html`<span class="badge warn">Waiting</span>`;
  return (options.replies.get(m.message_id) ?? []).length > 0 ? html`<span class="badge ok">Answered</span>` : html`<span class="badge">Done</span>`;
}

function message(m: AdminMessage, options: MessagesViewOptions): SafeHtml {
  const { session, now } = options;
  const waiting = (options.done.get(m.message_id) ?? null) === null;
  const task = m.task_ids[0] ? options.tasks.get(m.task_ids[0]) : undefined;
  const withdrawable = task !== undefined && (task.status === 'submitted' || task.status === 'accepted') && asksWithdrawal(m);
  return html`<li id="m-${m.message_id}" class="msg${waiting ? '' : ' done'}">
    <div class="message-head"><div><strong>${m.subject ?? 'No subject'}</strong> ${state(m, options)}${asksWithdrawal(m) && m.task_ids.length > 0 ? html` <span class="badge danger">Withdrawal?</span>` : ''}</div><span class="sub">${at(m.created_at)}</span></div>
    <p class="prose">${m.message}</p>
    ${repliesList(options.replies.get(m.message_id) ?? [], now)}
    <div class="row msg-actions">
      ${
        m.reply_to
          ? html`<details class="reply-box" name="reply"${options.replyTo === m.message_id ? html` open` : ''}><summary class="btn secondary small">Reply</summary>${replyForm(null, m, session)}</details>`
          : ''
      }
      ${
        waiting
          ? html`<form method="post" action="/operator/messages/${m.message_id}/done">${csrfField(session)}<button class="btn ghost small" type="submit">Mark done</button></form>`
          : ''
      }
      ${
        withdrawable
          ? html`<form method="post" action="/operator/tasks/${m.task_ids[0] ?? ''}/withdraw" data-confirm="Withdraw this task? It is rejected with the reason “Withdrawn at the requester’s request.”">${csrfField(session)}<input type="hidden" name="message_id" value="${m.message_id}"><button class="btn danger small" type="submit">Withdraw task</button></form>`
          : ''
      }
    </div>
  </li>`;
}

function group(g: Group, index: number, options: MessagesViewOptions): SafeHtml {
  const task = g.taskId ? options.tasks.get(g.taskId) : undefined;
  const heading = g.taskId
    ? html`About <a href="/operator/tasks/${g.taskId}">${task ? taskTitle(task, 60) : 'a task not found'}</a> ${task ? statusPill(task.status) : ''} ${shortId(g.taskId)}`
    : html`Not about a task`;
  return html`<section class="card thread" aria-labelledby="g-${index}">
    <h2 id="g-${index}" class="thread-head">${heading}</h2>
    ${[...g.senders.values()].map((list) => {
      const first = list[0] as AdminMessage;
      return html`<div class="sender">
        <h3>From ${senderLabel(first)} ${first.email_unverified ? html`<span class="badge warn">Address not checked</span>` : first.reply_to ? html`<span class="badge">Checked address</span>` : ''}</h3>
        <ul class="messages">${list.map((m) => message(m, options))}</ul>
      </div>`;
    })}
  </section>`;
}

export function messagesView(options: MessagesViewOptions): SafeHtml {
  const { show, waitingTotal } = options;
  return html`<div class="page-head"><h1>Messages</h1>
      <nav class="tabs" aria-label="Which messages">
        <a href="/operator/messages" ${show === 'waiting' ? html`aria-current="page"` : ''}>Waiting<span class="n">${waitingTotal}</span></a>
        <a href="/operator/messages?show=all" ${show === 'all' ? html`aria-current="page"` : ''}>All</a>
      </nav>
      <p class="sub wide-only">Grouped by task and sender. A message waits until someone replies (mailed to the sender, threaded) or marks it done.</p>
    </div>
    ${options.notice ?? ''}
    ${
      options.messages.length === 0
        ? html`<div class="card empty">${show === 'waiting' ? 'No message waits for an answer.' : 'No messages yet.'}</div>`
        : grouped(options.messages).map((g, i) => group(g, i, options))
    }
    ${options.next ? html`<div class="pager"><a class="btn secondary" href="${options.next}">Older messages →</a></div>` : ''}`;
}
