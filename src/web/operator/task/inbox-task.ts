import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminTask, AdminTaskDetail } from '../../../domain/tasks/admin-schemas.js';
import { isFinal, type TaskStatus } from '../../../domain/tasks/task.js';
import type { HeldAction } from '../../../services/console/held-actions.js';
import { snoozedUntil } from '../../../services/console/snoozes.js';
import { listTemplates, type Template } from '../../../services/console/templates.js';
import type { ServiceDeps } from '../../../services/context.js';
import type { Session } from '../auth/session.js';
import { INBOX_CSS, KEYS_JS, TEMPLATES_JS } from '../inbox-assets.js';
import { csrfField, when } from '../layout.js';

/**
 * What the inbox (docs/inbox.md) adds to a task page, above its blocks: each action held for undo ("Accepting… Undo",
 * a POST form, until the committer applies it) and the snooze of an open task.
 */

/** What a held action is doing until it commits: in progress, not done (the requester has seen nothing yet). */
export const HELD_WORDS: Record<string, string> = {
  accept: 'Accepting…',
  reject: 'Rejecting…',
  deliver: 'Delivering…',
  reply: 'Sending reply…',
};

/** Snooze choices, in hours. */
export const SNOOZE_CHOICES: [string, string][] = [
  ['1', '1 hour'],
  ['3', '3 hours'],
  ['24', '1 day'],
  ['72', '3 days'],
  ['168', '1 week'],
];

export function heldBanner(held: HeldAction, session: Session, now: Date): SafeHtml {
  return html`<div class="flash ok held" role="status" data-held="${held.id}" data-commit-at="${held.commit_at}">
    <form method="post" action="/operator/held/${held.id}/undo" class="row">
      ${csrfField(session)}
      <strong>${HELD_WORDS[held.kind] ?? held.kind}</strong>
      <span class="sub">— ${held.kind === 'reply' ? 'mailed' : 'the requester is told'} at ${when(held.commit_at, now)}; until then you can take it back.</span>
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

/**
 * Templates on the task page, without JavaScript: "Use" reloads the page with `?template=`; a
 * delivery template fills the deliverable (task-routes.ts), a canned reply fills a reply form to
 * the sender of the task's latest message, shown here, to edit before sending.
 */
function templateCard(task: AdminTaskDetail, templates: Template[], chosen: Template | undefined, session: Session): SafeHtml {
  const replyTo = task.messages.find((m) => m.reply_to);
  const results = task.status === 'accepted' && task.response_schema === null ? templates.filter((t) => t.kind === 'result') : [];
  const replies = replyTo ? templates.filter((t) => t.kind === 'reply') : [];
  if (results.length === 0 && replies.length === 0) return html``;
  // With the script, "Use" fills the box in place (templates.js); without it, the server does.
  const picker = (list: Template[], label: string, target: string) =>
    list.length === 0
      ? ''
      : html`<form method="get" action="/operator/tasks/${task.task_id}" class="row" data-template-target="${target}">
      <label>${label} <select name="template">${list.map((t) => html`<option value="${t.id}" data-body="${t.body}" ${chosen?.id === t.id ? html`selected` : ''}>${t.name}</option>`)}</select></label>
      <button class="btn secondary" type="submit">Use</button></form>`;
  const cannedReply =
    chosen?.kind === 'reply' && replyTo
      ? html`<form class="action reply" method="post" action="/operator/messages/${replyTo.message_id}/reply">
      ${csrfField(session)}<input type="hidden" name="task_id" value="${task.task_id}">
      <div class="field"><label for="canned-reply">Reply to ${replyTo.from ?? 'the sender'} (their latest message)</label>
      <textarea id="canned-reply" name="message" rows="4" maxlength="10000" required>
${chosen.body}</textarea></div>
      <div class="row end"><button class="btn secondary" type="submit">Send reply</button></div></form>`
      : '';
  return html`<details class="templates-card" ${chosen ? html`open` : ''}><summary>Templates…</summary>
    ${picker(results, 'Use a delivery template', 'notes')}${picker(replies, 'Use a canned reply', replyTo ? `reply-${replyTo.message_id}` : '')}${cannedReply}
    <script src="${TEMPLATES_JS.url}" defer></script>
    <p class="sub"><a href="/operator/templates">Manage templates</a></p></details>`;
}

/** The status change held on a task (accept, reject or deliver), if any: the task page shows it in place of the actions it replaced. */
export function heldChange(held: HeldAction[]): HeldAction | undefined {
  return held.find((h) => h.kind !== 'reply');
}

export async function taskInboxTools(deps: ServiceDeps, session: Session, task: AdminTaskDetail, held: HeldAction[], chosen?: Template): Promise<SafeHtml> {
  const now = deps.clock.now();
  const [until, templates] = await Promise.all([snoozedUntil(deps, task.task_id), listTemplates(deps)]);
  return html`<link rel="stylesheet" href="${INBOX_CSS.url}"><script src="${KEYS_JS.url}" defer></script>${held.map((h) => heldBanner(h, session, now))}${snoozeCard(task, until, session, now)}${templateCard(task, templates, chosen, session)}`;
}
