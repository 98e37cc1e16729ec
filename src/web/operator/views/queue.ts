import type { AdminMessage, AdminTask, Queue } from '../../../domain/admin-schemas.js';
import { dueOf } from '../../../domain/due.js';
import { html, type SafeHtml } from '../../../domain/html.js';
import { isFinal, OPEN_STATUSES } from '../../../domain/task.js';
import { unseenPastTarget } from '../../../services/response-target.js';
import { humanType, relative, statusPill, WITHDRAWAL } from '../layout.js';
import { type QueueToolbarQuery, queueToolbar } from './queue-toolbar.js';

const FILTERS: [string, string][] = [
  ['open', 'Open'],
  ['submitted', 'Submitted'],
  ['accepted', 'Accepted'],
  ['delivered', 'Delivered'],
  ['rejected', 'Rejected'],
  ['all', 'All'],
];

export function isOverdue(task: Pick<AdminTask, 'status' | 'eta'>, now: Date): boolean {
  return task.status === 'accepted' && task.eta !== null && Date.parse(task.eta) < now.getTime();
}

function excerpt(text: string, max = 220): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export interface QueueViewOptions {
  order: 'oldest' | 'newest' | 'due';
  targetHours: number;
  /** The VAPID public key, for the "enable notifications" button (Web Push). */
  pushKey?: string;
  /** OPERATOR_EMAIL is set: mail is the fallback. */
  mailFallback?: boolean;
  /** The test-task filter (issue 19): only, exclude, or absent. */
  test?: string | undefined;
  /** The current search, filters and sort (issue 31), for the toolbar. */
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

/** How long a waiting task has waited, against the response target. */
function age(task: AdminTask, now: Date, targetHours: number): SafeHtml {
  if (task.status !== 'submitted') return html``;
  const hours = Math.max(0, (now.getTime() - Date.parse(task.created_at)) / 3_600_000);
  const shown = hours < 1 ? `${Math.round(hours * 60)} min` : `${Math.floor(hours)} h`;
  const late = unseenPastTarget(task, targetHours, now);
  return html`<span class="${late ? 'overdue-text' : ''}">Waiting ${shown} of ${targetHours} h target</span>`;
}

/** How long is left until the task is due: the earlier of its deadline and its response target (open tasks only). */
function timeLeft(task: AdminTask, now: Date, targetHours: number): SafeHtml {
  if (isFinal(task.status)) return html``;
  const due = dueOf(task, targetHours);
  const ms = due.at.getTime() - now.getTime();
  const span = (h: number) => (h < 1 ? `${Math.max(1, Math.round(h * 60))} min` : h < 48 ? `${Math.floor(h)} h` : `${Math.floor(h / 24)} days`);
  const why = due.by === 'deadline' ? 'deadline' : 'response target';
  return ms >= 0
    ? html`<span data-due="${due.at.toISOString()}">${span(ms / 3_600_000)} left (${why})</span>`
    : html`<span class="overdue-text" data-due="${due.at.toISOString()}">${why === 'deadline' ? 'Deadline passed' : 'Response target passed'} ${span(-ms / 3_600_000)} ago</span>`;
}

function item(task: AdminTask, mail: AdminMessage[], now: Date, options: QueueViewOptions): SafeHtml {
  const late = unseenPastTarget(task, options.targetHours, now);
  const overdue = isOverdue(task, now) || late;
  const withdrawal = mail.some((m) => WITHDRAWAL.test(`${m.subject ?? ''} ${m.message}`));
  return html`<li data-task-id="${task.task_id}"><a class="item${overdue ? ' overdue' : ''}" href="/operator/tasks/${task.task_id}">
    <div class="item-top">
      ${statusPill(task.status)}
      <span class="item-type">${humanType(task.task_type)}</span>
      ${task.seen_by_operator_at === null ? html`<span class="badge new">New</span>` : ''}
      ${testBadge(task)}
      ${late ? html`<span class="badge danger">Overdue: not seen within ${options.targetHours} h</span>` : ''}
      ${task.email_unverified ? html`<span class="badge warn" title="The MX check could not run at submission">E-mail unverified</span>` : ''}
      ${withdrawal ? html`<span class="badge danger">Withdrawal?</span>` : mail.length > 0 ? html`<span class="badge">${mail.length} message${mail.length > 1 ? 's' : ''}</span>` : ''}
      ${task.delivery === 'status_poll' ? html`<span class="badge" title="The result goes in operator_notes, not by e-mail">status_poll</span>` : ''}
      ${task.location_required ? html`<span class="badge" title="Needs physical presence">On site: ${excerpt(task.location_detail ?? 'location not given', 40)}</span>` : ''}
    </div>
    <div class="item-when"><time datetime="${task.created_at}" title="${task.created_at}">${relative(task.created_at, now)}</time></div>
    <div class="item-desc">${excerpt(task.description)}</div>
    <div class="item-meta">
      ${age(task, now, options.targetHours)}
      ${timeLeft(task, now, options.targetHours)}
      ${task.requester ? html`<span>From ${excerpt(task.requester, 60)}</span>` : html`<span>No requester given</span>`}
      ${task.eta ? html`<span class="${overdue ? 'overdue-text' : ''}">${overdue ? `Overdue: ETA was ${relative(task.eta, now)}` : `ETA ${relative(task.eta, now)}`}</span>` : ''}
      ${task.deadline ? html`<span>Deadline ${excerpt(task.deadline, 40)}</span>` : ''}
    </div>
  </a></li>`;
}

/** The "Test" badge of a test task (issue 19): queue items and the task page. */
export function testBadge(task: Pick<AdminTask, 'is_test'>): SafeHtml | '' {
  return task.is_test
    ? html`<span class="badge test" title="The word &quot;test&quot; is in the description or requester: left out of the response-time figures">Test</span>`
    : '';
}

/** The test-task filter (issue 19), kept apart from the status tabs: it narrows whichever is open. */
function testFilter(filter: string, test: string | undefined): SafeHtml {
  const options: [string | undefined, string][] = [
    [undefined, 'All tasks'],
    ['only', 'Test tasks only'],
    ['exclude', 'Without test tasks'],
  ];
  return html`<nav class="tabs test-filter" aria-label="Filter test tasks">
      ${options.map(([key, label]) => html`<a href="/operator?status=${filter}${key ? `&test=${key}` : ''}" ${test === key ? html`aria-current="page"` : ''}>${label}</a>`)}
    </nav>`;
}

export function queueView(
  queue: Queue,
  filter: string,
  counts: Record<string, number>,
  mail: Map<string, AdminMessage[]>,
  now: Date,
  options: QueueViewOptions = { order: 'oldest', targetHours: 12 },
): SafeHtml {
  const count = (key: string): number => {
    if (key === 'all') return Object.values(counts).reduce((a, b) => a + b, 0);
    if (key === 'open') return OPEN_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
    return counts[key] ?? 0;
  };
  const overdue = queue.tasks.filter((t) => isOverdue(t, now) || unseenPastTarget(t, options.targetHours, now)).length;
  const order = options.order;
  const next = queue.next_cursor
    ? `/operator?status=${filter}&order=${order}${options.test ? `&test=${options.test}` : ''}&cursor=${encodeURIComponent(queue.next_cursor)}`
    : null;
  return html`<div data-live-list><div class="page-head">
      <div><h1>Queue</h1><p class="sub">${order === 'due' ? 'Due first: the earlier of deadline and response target on top.' : order === 'oldest' ? 'Oldest first: the longest wait on top.' : 'Newest first.'} Target: every task seen within ${options.targetHours} h. Open a task to review it; the first view stamps it as seen.</p></div>
      ${overdue > 0 ? html`<span class="badge danger">${overdue} overdue</span>` : ''}
    </div>
    <nav class="tabs" aria-label="Filter by status">
      ${FILTERS.map(([key, label]) => html`<a href="/operator?status=${key}&amp;order=${order}" ${filter === key ? html`aria-current="page"` : ''}>${label}<span class="n">${count(key)}</span></a>`)}
    </nav>
    <nav class="tabs" aria-label="Order">
      <a href="/operator?status=${filter}&amp;order=due" ${order === 'due' ? html`aria-current="page"` : ''}>Due first</a>
      <a href="/operator?status=${filter}&amp;order=oldest" ${order === 'oldest' ? html`aria-current="page"` : ''}>Oldest first</a>
      <a href="/operator?status=${filter}&amp;order=newest" ${order === 'newest' ? html`aria-current="page"` : ''}>Newest first</a>
    </nav>
    ${testFilter(filter, options.test === 'only' || options.test === 'exclude' ? options.test : undefined)}
    ${queueToolbar(options.search ?? { status: filter, order })}
    ${
      queue.tasks.length === 0
        ? html`<div class="card empty">${filter === 'open' ? 'Nothing waiting. New tasks appear here.' : 'No tasks here.'}</div>`
        : html`<ul class="queue">${queue.tasks.map((task) => item(task, mail.get(task.task_id) ?? [], now, options))}</ul>`
    }
    ${next ? html`<div class="pager"><a class="btn secondary" href="${next}">More tasks →</a></div>` : ''}</div>
    ${notifications(options)}`;
}
