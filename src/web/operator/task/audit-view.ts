import { html, type SafeHtml } from '../../../domain/html.js';
import type { AuditEntry } from '../../../domain/team/team-schemas.js';
import { when } from '../layout.js';

/** The audit log's action names (the API's, e.g. `task.accepted`) in words; an unknown one as it is. */
const ACTION_WORDS: Record<string, string> = {
  'task.accepted': 'accepted the task',
  'task.delivered': 'delivered the result',
  'task.rejected': 'rejected the task',
  'task.updated': 'changed the task',
  'task.assigned': 'changed who has the task',
  'task.snoozed': 'snoozed the task',
  'task.unsnoozed': 'woke the task',
  'question.asked': 'asked the requester a question',
  'message.replied': 'replied to a message',
  'message.done': 'marked a message done',
  'attachment.added': 'attached a file',
  'attachment.removed': 'removed a file',
  'blocklist.added': 'blocked a sender',
  'blocklist.removed': 'unblocked a sender',
};

/** Who did what, when, on one task (the audit log's entries for it, newest first). */
export function auditView(entries: readonly AuditEntry[], names: ReadonlyMap<string, string>, now: Date): SafeHtml {
  const body =
    entries.length === 0
      ? html`<p class="sub">Nothing recorded yet.</p>`
      : html`<ol class="timeline">${entries.map(
          (entry) =>
            html`<li data-audit="${entry.action}"><strong>${names.get(entry.actor) ?? entry.actor}</strong> <span title="${entry.action}">${ACTION_WORDS[entry.action] ?? entry.action}</span> <span class="sub">${when(entry.at, now)}</span></li>`,
        )}</ol>`;
  return html`<section class="card" aria-labelledby="aud"><h2 id="aud">Who did what</h2>${body}</section>`;
}
