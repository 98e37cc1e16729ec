import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminTask } from '../../../domain/tasks/admin-schemas.js';
import { isFinal, type TaskStatus } from '../../../domain/tasks/task.js';
import type { Session } from '../auth/session.js';
import { csrfField, humanType, statusPill, utcInputValue, when } from '../layout.js';

/** The inbox's lists (docs/inbox.md) beside the queue cards: the bulk selection, the snoozed tasks, a bulk result. */

function title(task: AdminTask): string {
  const flat = task.description.replace(/\s+/g, ' ').trim();
  return flat.length > 90 ? `${flat.slice(0, 89)}…` : flat;
}

/**
 * Several tasks at once (no JavaScript needed): a checkbox per open task, then accept with one ETA
 * or reject with one reason. Each task goes through the same service call as on its own page.
 */
export function bulkView(tasks: AdminTask[], session: Session, now: Date, back: string): SafeHtml {
  const open = tasks.filter((t) => !isFinal(t.status as TaskStatus));
  if (open.length === 0) return html`<div class="card empty">No open task here to select.</div>`;
  const soon = utcInputValue(new Date(now.getTime() + 24 * 3_600_000));
  return html`<form class="card bulk" method="post" action="/operator/bulk" aria-labelledby="bulk-heading">
    ${csrfField(session)}<input type="hidden" name="back" value="${back}">
    <input type="hidden" name="eta_offset" value="0" data-tz-offset>
    <h2 id="bulk-heading">Select tasks</h2>
    <ul class="bulk-list">
      ${open.map(
        (task) => html`<li data-task-id="${task.task_id}"><label class="check">
          <input type="checkbox" name="task_id" value="${task.task_id}">
          <span class="bulk-item"><span class="bulk-title">${title(task)}</span><span class="sub">${statusPill(task.status)} ${humanType(task.task_type)}</span></span>
        </label></li>`,
      )}
    </ul>
    <fieldset class="bulk-actions"><legend>Accept the selected (submitted) tasks</legend>
      <label>ETA <input type="datetime-local" name="eta_local" value="${soon}"></label>
      <span class="sub">(UTC without JavaScript)</span>
      <button class="btn" type="submit" name="action" value="accept">Accept selected</button>
    </fieldset>
    <fieldset class="bulk-actions"><legend>Reject the selected tasks</legend>
      <label>Reason <input type="text" name="reason" maxlength="2000" placeholder="Told to each requester"></label>
      <button class="btn secondary" type="submit" name="action" value="reject">Reject selected</button>
    </fieldset>
  </form>`;
}

export interface BulkOutcome {
  taskId: string;
  ok: boolean;
  message: string;
}

export function bulkResultView(action: string, outcomes: BulkOutcome[], back: string): SafeHtml {
  const done = outcomes.filter((o) => o.ok).length;
  const verb = action === 'accept' ? 'accepted' : 'rejected';
  return html`<section class="card" aria-labelledby="bulk-result">
    <h1 id="bulk-result">${done} of ${outcomes.length} ${verb}</h1>
    <ul class="bulk-result">${outcomes.map(
      (o) => html`<li class="${o.ok ? '' : 'overdue-text'}"><a href="/operator/tasks/${o.taskId}" class="mono">${o.taskId}</a>: ${o.message}</li>`,
    )}</ul>
    <p><a class="btn secondary" href="${back}">Back to the queue</a></p>
  </section>`;
}

export function snoozedView(items: { task: AdminTask; until: string }[], session: Session, now: Date): SafeHtml {
  const head = html`<h1>Snoozed</h1><p class="sub">Hidden from the inbox until their time, the soonest back first. <a href="/operator">Back to the queue</a></p>`;
  if (items.length === 0) return html`${head}<div class="card empty">No snoozed task. Snooze a task from its page to hide it from the inbox for a while.</div>`;
  return html`${head}<ul class="queue snoozed-list">${items.map(
    ({ task, until }) => html`<li data-task-id="${task.task_id}" class="card">
      <a href="/operator/tasks/${task.task_id}"><strong>${title(task)}</strong></a>
      <div class="row"><span>Snoozed until ${when(until, now)}</span>
      <form method="post" action="/operator/tasks/${task.task_id}/wake">${csrfField(session)}<input type="hidden" name="back" value="queue"><button class="btn secondary small" type="submit">Wake now</button></form></div>
    </li>`,
  )}</ul>`;
}
