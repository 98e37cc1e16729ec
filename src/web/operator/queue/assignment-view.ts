import { html, type SafeHtml } from '../../../domain/html.js';
import type { Actor } from '../../../domain/team/actor.js';
import type { Operator } from '../../../domain/team/team-schemas.js';
import type { Session } from '../auth/session.js';
import { csrfField } from '../layout.js';

/** The queue's views by assignment, with their counts of open tasks: Mine, Unassigned, All. */
export function assignmentTabs(view: string, counts: { mine: number; unassigned: number }, actor: Actor): SafeHtml {
  const tabs: [string, string, number | undefined][] = [
    ...(actor.kind === 'operator' ? ([['mine', 'Mine', counts.mine]] as [string, string, number][]) : []),
    ['unassigned', 'Unassigned', counts.unassigned],
    ['all', 'All', undefined],
  ];
  return html`<nav class="tabs" aria-label="Assignment">${tabs.map(
    ([key, label, count]) =>
      html`<a href="/operator?view=${key}" ${view === key ? html`aria-current="page"` : ''}>${label}${count !== undefined ? html` <span class="count">${count}</span>` : ''}</a>`,
  )}</nav>`;
}

/** The task page's assignment card: who has it, "Take it", "Give to…". */
export function assignmentCard(options: { taskId: string; assignee: string | null; operators: Operator[]; actor: Actor; session: Session }): SafeHtml {
  const { taskId, assignee, operators, actor, session } = options;
  const holder = operators.find((op) => op.operator_id === assignee);
  const action = `/operator/tasks/${taskId}/assign`;
  const mine = actor.kind === 'operator' && actor.operatorId === assignee;
  return html`<section class="card" aria-labelledby="asg"><h2 id="asg">Assignment</h2>
    <p data-assignee="${assignee ?? ''}">${holder ? html`Assigned to <strong>${holder.name}</strong>${mine ? ' (you)' : ''}.` : 'Nobody has taken this task.'}</p>
    ${
      actor.kind === 'operator' && !mine
        ? html`<form method="post" action="${action}" class="inline">${csrfField(session)}<input type="hidden" name="assignee" value="${actor.operatorId}"><button class="btn small" type="submit">Take it</button></form>`
        : ''
    }
    <form method="post" action="${action}" class="row">${csrfField(session)}
      <label for="give-to">Give to…</label>
      <select id="give-to" name="assignee"><option value="">nobody</option>${operators
        .filter((op) => !op.disabled)
        .map(
          (op) =>
            html`<option value="${op.operator_id}" ${op.operator_id === assignee ? html`selected` : ''}>${op.name}${op.on_duty ? ' (on duty)' : ''}</option>`,
        )}</select>
      <button class="btn small ghost" type="submit">Assign</button>
    </form>
  </section>`;
}
