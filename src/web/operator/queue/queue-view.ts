import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminMessage, AdminTask, Queue } from '../../../domain/tasks/admin-schemas.js';
import { dueOf } from '../../../domain/tasks/due.js';
import { isFinal } from '../../../domain/tasks/task.js';
import { unseenPastTarget } from '../../../services/alerts/response-target.js';
import type { NamedTask } from '../../../services/messages/states.js';
import type { Session } from '../auth/session.js';
import { at, csrfField, relative, senderLabel, taskTitle, WITHDRAWAL } from '../layout.js';
import { type QueueToolbarQuery, queueToolbar } from './toolbar-view.js';

/**
 * The queue as an inbox (docs/inbox.md): one stream of what needs the operator. On the
 * first page of open work, the messages still waiting come first; then the tasks, each with a
 * human title, why it is here (new, answer in, due soon, overdue…), the place, the time left and
 * one action reachable from the list (accept with an ETA chip, reply, mark done). Each card is two
 * lines and, where there is one, a row of actions: it stays under 120 px on a phone.
 */

export function isOverdue(task: Pick<AdminTask, 'status' | 'eta'>, now: Date): boolean {
  return task.status === 'accepted' && task.eta !== null && Date.parse(task.eta) < now.getTime();
}

function excerpt(text: string, max = 220): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The ETA chips of the quick accept: hours from the moment the operator presses one. */
export const QUICK_ETA_HOURS: [number, string][] = [
  [2, '2 h'],
  [24, '1 day'],
  [72, '3 days'],
];

export interface QueueViewOptions {
  order: 'oldest' | 'newest' | 'due';
  targetHours: number;
  /** The VAPID public key, for the "enable notifications" button (Web Push). */
  pushKey?: string;
  /** OPERATOR_EMAIL is set: mail is the fallback. */
  mailFallback?: boolean;
  /** The test-task filter (docs/import.md): only, exclude, or absent. */
  test?: string | undefined;
  /** Operators by id, to name a task's assignee; `me` is the signed-in operator (docs/team.md). */
  operatorNames?: ReadonlyMap<string, string>;
  me?: string | undefined;
  /** For the per-card forms (quick accept, mark done). */
  session?: Session;
  /** The assignment views, shown in the toolbar's sheet. */
  assignment?: SafeHtml;
  /** Messages waiting for an operator, shown first in the stream (first page of open work only). */
  waiting?: AdminMessage[];
  /** How many messages wait in all (the stream shows the newest few). */
  waitingTotal?: number;
  /** The tasks those messages name: their titles. */
  named?: Map<string, NamedTask>;
  /** The current search, filters and sort (docs/inbox.md), for the toolbar. */
  search?: QueueToolbarQuery;
}

/** Offers push notifications on this device; the button shows only where the browser can do it. */
function notifications(options: QueueViewOptions): SafeHtml {
  if (!options.pushKey) return html``;
  return html`<section class="card notify" aria-labelledby="notify-heading">
    <h2 id="notify-heading">Alerts on this device</h2>
    <p class="sub">Get a notification for every new task and message, even with the console closed. ${options.mailFallback ? 'Mail to OPERATOR_EMAIL keeps coming as well.' : 'Without it, set OPERATOR_EMAIL to be told by mail.'}</p>
    <div class="row"><button type="button" class="btn secondary" data-push-key="${options.pushKey}" hidden>Enable notifications</button><span class="sub" data-push-status role="status">Needs a browser with notifications and JavaScript.</span></div>
  </section>`;
}

const span = (h: number) => (h < 1 ? `${Math.max(1, Math.round(h * 60))} min` : h < 48 ? `${Math.floor(h)} h` : `${Math.floor(h / 24)} days`);

/** The card's right column: the time left until due (open tasks), else how long ago it changed. */
function timeLeft(task: AdminTask, now: Date, targetHours: number): SafeHtml {
  if (isFinal(task.status)) return html`<span>${relative(task.updated_at, now)}</span>`;
  const due = dueOf(task, targetHours);
  const ms = due.at.getTime() - now.getTime();
  const why = due.by === 'deadline' ? 'deadline' : 'response target';
  return ms >= 0
    ? html`<span data-due="${due.at.toISOString()}" title="Until the ${why}">${span(ms / 3_600_000)} left</span>`
    : html`<span class="overdue-text" data-due="${due.at.toISOString()}">${why === 'deadline' ? 'Deadline passed' : 'Target passed'} ${span(-ms / 3_600_000)} ago</span>`;
}

/** When an open task is due, in the operator's time (second line of the card). */
function dueLine(task: AdminTask, targetHours: number): SafeHtml | '' {
  if (isFinal(task.status)) return '';
  const due = dueOf(task, targetHours);
  return html`<span>${due.by === 'deadline' ? 'deadline' : 'due'} ${at(due.at.toISOString(), true)}</span>`;
}

/** Why the task is in front of the operator, first thing on its second line. */
function reason(task: AdminTask, now: Date, targetHours: number): SafeHtml {
  if (isOverdue(task, now)) return html`<span class="overdue-text">Overdue: ETA was ${relative(task.eta, now)}</span>`;
  if (unseenPastTarget(task, targetHours, now)) return html`<span class="badge danger">Overdue: not seen within ${targetHours} h</span>`;
  if (task.status === 'submitted' && task.seen_by_operator_at === null) return html`<span class="badge new">New</span>`;
  if (task.status === 'submitted') return html`<span class="badge">To review</span>`;
  const last = task.questions.at(-1);
  if (last && last.answer !== null && task.status === 'accepted') return html`<span class="badge new">Answer in</span>`;
  if (task.awaiting_answer) return html`<span class="badge warn">Waiting for an answer</span>`;
  if (task.status === 'accepted') {
    const due = dueOf(task, targetHours).at.getTime() - now.getTime();
    return due < 24 * 3_600_000 ? html`<span class="badge warn">Due soon</span>` : html`<span class="badge">In progress</span>`;
  }
  return html`<span class="badge">${task.status === 'delivered' ? 'Delivered' : task.status === 'rejected' ? 'Rejected' : task.status.replace('_', ' ')}</span>`;
}

function place(task: AdminTask): string {
  if (task.location_required) return task.location_detail ? excerpt(task.location_detail, 40) : 'On site, place not given';
  return task.location_detail ? excerpt(task.location_detail, 40) : 'Remote';
}

/** Accept from the list with an ETA chip: a small form per card, working without script. */
function quickAccept(task: AdminTask, session: Session): SafeHtml {
  return html`<form class="quick" method="post" action="/operator/tasks/${task.task_id}/accept">
    ${csrfField(session)}<input type="hidden" name="back" value="queue">
    <span class="quick-label" aria-hidden="true">Accept, ETA</span>
    ${QUICK_ETA_HOURS.map(([hours, label]) => html`<button class="chip" type="submit" name="eta_hours" value="${hours}"><span class="vh">Accept, ETA </span>${label}</button>`)}
  </form>`;
}

function taskItem(task: AdminTask, mail: AdminMessage[], now: Date, options: QueueViewOptions): SafeHtml {
  const overdue = isOverdue(task, now) || unseenPastTarget(task, options.targetHours, now);
  const withdrawal = mail.some((m) => WITHDRAWAL.test(`${m.subject ?? ''} ${m.message}`));
  return html`<li data-task-id="${task.task_id}"><a class="item${overdue ? ' overdue' : ''}" href="/operator/tasks/${task.task_id}">
    <span class="item-title">${taskTitle(task)}</span>
    <span class="item-when">${timeLeft(task, now, options.targetHours)}</span>
    <span class="item-line">
      ${reason(task, now, options.targetHours)}
      ${testBadge(task)}
      ${assigneeBadge(task, options)}
      ${withdrawal ? html`<span class="badge danger">Withdrawal?</span>` : mail.length > 0 ? html`<span class="badge">${mail.length} message${mail.length > 1 ? 's' : ''}</span>` : ''}
      ${task.email_unverified ? html`<span class="badge warn" title="The MX check could not run at submission">Address not checked</span>` : ''}
      <span>${place(task)}</span>
      ${dueLine(task, options.targetHours)}
      ${task.requester ? html`<span>from ${excerpt(task.requester, 40)}</span>` : ''}
    </span>
  </a>${task.status === 'submitted' && options.session ? quickAccept(task, options.session) : ''}</li>`;
}

/** A waiting message in the stream: who, about what, and Reply / Mark done from the list. */
function messageItem(m: AdminMessage, now: Date, options: QueueViewOptions): SafeHtml {
  const about = m.task_ids[0] ? options.named?.get(m.task_ids[0]) : undefined;
  const anchor = `/operator/messages#m-${m.message_id}`;
  return html`<li data-message-id="${m.message_id}"><a class="item" href="${anchor}">
    <span class="item-title">${m.subject ? excerpt(m.subject, 60) : taskTitle({ description: m.message, task_type: 'message' })}</span>
    <span class="item-when"><span>${relative(m.created_at, now)}</span></span>
    <span class="item-line">
      ${WITHDRAWAL.test(`${m.subject ?? ''} ${m.message}`) && m.task_ids.length > 0 ? html`<span class="badge danger">Withdrawal?</span>` : html`<span class="badge new">Message</span>`}
      <span>from ${excerpt(senderLabel(m), 60)}</span>
      ${about ? html`<span>about ${taskTitle(about, 40)}</span>` : ''}
    </span>
  </a>${
    options.session
      ? html`<div class="quick">
      <a class="chip" href="/operator/messages?reply=${m.message_id}#m-${m.message_id}">Reply</a>
      <form method="post" action="/operator/messages/${m.message_id}/done">${csrfField(options.session)}<input type="hidden" name="back" value="queue"><button class="chip" type="submit">Mark done</button></form>
    </div>`
      : ''
  }</li>`;
}

/** Who holds the task (docs/team.md): "Yours", or the assignee's name. */
function assigneeBadge(task: AdminTask, options: QueueViewOptions): SafeHtml | '' {
  if (task.assignee === null) return '';
  const label = task.assignee === options.me ? 'Yours' : `Assigned to ${options.operatorNames?.get(task.assignee) ?? 'an operator'}`;
  return html`<span class="badge" data-assignee="${task.assignee}">${label}</span>`;
}

/** The "Test" badge of a test task (docs/import.md): queue items and the task page. */
export function testBadge(task: Pick<AdminTask, 'is_test'>): SafeHtml | '' {
  return task.is_test
    ? html`<span class="badge test" title="The word &quot;test&quot; is in the description or requester: left out of the response-time figures">Test</span>`
    : '';
}

export function queueView(
  queue: Queue,
  filter: string,
  counts: Record<string, number>,
  mail: Map<string, AdminMessage[]>,
  now: Date,
  options: QueueViewOptions = { order: 'oldest', targetHours: 12 },
): SafeHtml {
  const overdue = queue.tasks.filter((t) => isOverdue(t, now) || unseenPastTarget(t, options.targetHours, now)).length;
  const order = options.order;
  const test = options.test === 'only' || options.test === 'exclude' ? options.test : undefined;
  const next = queue.next_cursor
    ? `/operator?status=${filter}&order=${order}${test ? `&test=${test}` : ''}&cursor=${encodeURIComponent(queue.next_cursor)}`
    : null;
  const waiting = options.waiting ?? [];
  const more = (options.waitingTotal ?? waiting.length) - waiting.length;
  const empty = queue.tasks.length === 0 && waiting.length === 0;
  return html`<div data-live-list><div class="page-head queue-head">
      <h1>Queue</h1>
      ${overdue > 0 ? html`<span class="badge danger">${overdue} overdue</span>` : ''}
      <p class="sub wide-only">${order === 'due' ? 'Due first: the earlier of deadline and response target on top.' : order === 'oldest' ? 'Oldest first: the longest wait on top.' : 'Newest first.'} Target: every task seen within ${options.targetHours} h. Open a task to review it; the first view stamps it as seen.</p>
    </div>
    ${queueToolbar(options.search ?? { status: filter, order, test }, { counts, assignment: options.assignment })}
    ${
      empty
        ? html`<div class="card empty">${filter === 'open' ? 'Nothing waiting. New tasks appear here.' : 'No tasks here.'}</div>`
        : html`<ul class="queue">${waiting.map((m) => messageItem(m, now, options))}${queue.tasks.map((task) => taskItem(task, mail.get(task.task_id) ?? [], now, options))}</ul>`
    }
    ${more > 0 ? html`<p class="sub"><a href="/operator/messages">${more} more waiting message${more > 1 ? 's' : ''}</a></p>` : ''}
    ${next ? html`<div class="pager"><a class="btn secondary" href="${next}">More tasks →</a></div>` : ''}</div>
    ${notifications(options)}`;
}
