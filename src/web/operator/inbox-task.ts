import type { AdminTask } from '../../domain/admin-schemas.js';
import { html, type SafeHtml } from '../../domain/html.js';
import { isFinal, type TaskStatus } from '../../domain/task.js';
import type { ServiceDeps } from '../../services/context.js';
import { type HeldAction, heldActionsOf } from '../../services/held-actions.js';
import { snoozedUntil } from '../../services/snoozes.js';
import { csrfField, when } from './layout.js';
import type { Session } from './session.js';

/**
 * What issue 31 adds to a task page, above its blocks: each action held for undo ("Accepted — Undo",
 * a POST form, until the committer applies it) and the snooze of an open task.
 */

const HELD_WORDS: Record<string, string> = {
  accept: 'Accepted',
  reject: 'Rejected',
  deliver: 'Delivered',
  reply: 'Reply sent',
};

/** Snooze choices, in hours. */
export const SNOOZE_CHOICES: [string, string][] = [
  ['1', '1 hour'],
  ['3', '3 hours'],
  ['24', '1 day'],
  ['72', '3 days'],
  ['168', '1 week'],
];

function heldBanner(held: HeldAction, session: Session, now: Date): SafeHtml {
  return html`<div class="flash ok held" role="status" data-held="${held.id}" data-commit-at="${held.commit_at}">
    <form method="post" action="/operator/held/${held.id}/undo" class="row">
      ${csrfField(session)}
      <strong>${HELD_WORDS[held.kind] ?? held.kind}</strong>
      <span class="sub">— the requester is told at ${when(held.commit_at, now)}; until then you can take it back.</span>
      <button class="btn secondary" type="submit" data-key-undo>Undo</button>
    </form>
  </div>`;
}

function snoozeCard(task: AdminTask, until: string | undefined, session: Session, now: Date): SafeHtml {
  if (isFinal(task.status as TaskStatus)) return html``;
  if (until)
    return html`<div class="flash ok snoozed" role="status"><form method="post" action="/operator/tasks/${task.task_id}/wake" class="row">
      ${csrfField(session)}<strong>Snoozed until ${when(until, now)}</strong>
      <span class="sub">Hidden from the inbox until then.</span>
      <button class="btn secondary" type="submit">Wake now</button></form></div>`;
  return html`<details class="snooze"><summary>Snooze…</summary>
    <form method="post" action="/operator/tasks/${task.task_id}/snooze" class="row">
      ${csrfField(session)}
      <label>Hide from the inbox for <select name="hours">${SNOOZE_CHOICES.map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select></label>
      <button class="btn secondary" type="submit">Snooze</button>
    </form></details>`;
}

export async function taskInboxTools(deps: ServiceDeps, session: Session, task: AdminTask): Promise<SafeHtml> {
  const now = deps.clock.now();
  const [held, until] = await Promise.all([heldActionsOf(deps, task.task_id), snoozedUntil(deps, task.task_id)]);
  return html`<link rel="stylesheet" href="/operator/assets/inbox.css"><script src="/operator/assets/keys.js" defer></script>${held.map((h) => heldBanner(h, session, now))}${snoozeCard(task, until, session, now)}`;
}
