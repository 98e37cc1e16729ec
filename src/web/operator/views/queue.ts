import type { AdminMessage, AdminTask, Queue } from '../../../domain/admin-schemas.js';
import { html, type SafeHtml } from '../../../domain/html.js';
import { OPEN_STATUSES } from '../../../domain/task.js';
import { humanType, relative, statusPill, WITHDRAWAL } from '../layout.js';

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

function item(task: AdminTask, mail: AdminMessage[], now: Date): SafeHtml {
  const overdue = isOverdue(task, now);
  const withdrawal = mail.some((m) => WITHDRAWAL.test(`${m.subject ?? ''} ${m.message}`));
  return html`<li><a class="item${overdue ? ' overdue' : ''}" href="/operator/tasks/${task.task_id}">
    <div class="item-top">
      ${statusPill(task.status)}
      <span class="item-type">${humanType(task.task_type)}</span>
      ${task.seen_by_operator_at === null ? html`<span class="badge new">New</span>` : ''}
      ${testBadge(task)}
      ${task.email_unverified ? html`<span class="badge warn" title="The MX check could not run at submission">E-mail unverified</span>` : ''}
      ${withdrawal ? html`<span class="badge danger">Withdrawal?</span>` : mail.length > 0 ? html`<span class="badge">${mail.length} message${mail.length > 1 ? 's' : ''}</span>` : ''}
      ${task.delivery === 'status_poll' ? html`<span class="badge" title="The result goes in operator_notes, not by e-mail">status_poll</span>` : ''}
      ${task.location_required ? html`<span class="badge" title="Needs physical presence">On site: ${excerpt(task.location_detail ?? 'location not given', 40)}</span>` : ''}
    </div>
    <div class="item-when"><time datetime="${task.created_at}" title="${task.created_at}">${relative(task.created_at, now)}</time></div>
    <div class="item-desc">${excerpt(task.description)}</div>
    <div class="item-meta">
      ${task.requester ? html`<span>From ${excerpt(task.requester, 60)}</span>` : html`<span>No requester given</span>`}
      ${task.eta ? html`<span class="${overdue ? 'overdue-text' : ''}">${overdue ? `Overdue: ETA was ${relative(task.eta, now)}` : `ETA ${relative(task.eta, now)}`}</span>` : ''}
      ${task.deadline ? html`<span>Deadline ${excerpt(task.deadline, 40)}</span>` : ''}
    </div>
  </a></li>`;
}

/** The "Test" badge of a test task (issue 19): queue items and the task page. */
export function testBadge(task: Pick<AdminTask, 'is_test'>): SafeHtml | '' {
  return task.is_test ? html`<span class="badge test" title="The word &quot;test&quot; is in the description or requester: left out of the response-time figures">Test</span>` : '';
}

/** The test-task filter (issue 19), kept apart from the status tabs: it narrows whichever is open. */
function testFilter(filter: string, test: string | undefined): SafeHtml {
  const options: [string | undefined, string][] = [[undefined, 'All tasks'], ['only', 'Test tasks only'], ['exclude', 'Without test tasks']];
  return html`<nav class="tabs test-filter" aria-label="Filter test tasks">
      ${options.map(([key, label]) => html`<a href="/operator?status=${filter}${key ? `&test=${key}` : ''}" ${test === key ? html`aria-current="page"` : ''}>${label}</a>`)}
    </nav>`;
}

export function queueView(queue: Queue, filter: string, counts: Record<string, number>, mail: Map<string, AdminMessage[]>, now: Date, test?: string): SafeHtml {
  const count = (key: string): number => {
    if (key === 'all') return Object.values(counts).reduce((a, b) => a + b, 0);
    if (key === 'open') return OPEN_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
    return counts[key] ?? 0;
  };
  const overdue = queue.tasks.filter((t) => isOverdue(t, now)).length;
  const next = queue.next_cursor ? `/operator?status=${filter}${test ? `&test=${test}` : ''}&cursor=${encodeURIComponent(queue.next_cursor)}` : null;
  return html`<div class="page-head">
      <div><h1>Queue</h1><p class="sub">Newest first. Open a task to review it; the first view stamps it as seen.</p></div>
      ${overdue > 0 ? html`<span class="badge danger">${overdue} overdue</span>` : ''}
    </div>
    <nav class="tabs" aria-label="Filter by status">
      ${FILTERS.map(([key, label]) => html`<a href="/operator?status=${key}" ${filter === key ? html`aria-current="page"` : ''}>${label}<span class="n">${count(key)}</span></a>`)}
    </nav>
    ${testFilter(filter, test === 'only' || test === 'exclude' ? test : undefined)}
    ${
      queue.tasks.length === 0
        ? html`<div class="card empty">${filter === 'open' ? 'Nothing waiting. New tasks appear here.' : 'No tasks here.'}</div>`
        : html`<ul class="queue">${queue.tasks.map((task) => item(task, mail.get(task.task_id) ?? [], now))}</ul>`
    }
    ${next ? html`<div class="pager"><a class="btn secondary" href="${next}">Older tasks →</a></div>` : ''}`;
}
