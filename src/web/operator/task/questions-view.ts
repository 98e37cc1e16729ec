import { html, type SafeHtml } from '../../../domain/html.js';
import { QUESTION_MAX } from '../../../domain/questions/questions.js';
import type { AdminTaskDetail } from '../../../domain/tasks/admin-schemas.js';
import { isFinal } from '../../../domain/tasks/task.js';
import type { Session } from '../auth/session.js';
import { csrfField, when } from '../layout.js';

/**
 * The task page's questions to the requester (docs/questions.md): each question with its answer beside it
 * (the page re-renders live when the answer comes, through the change feed), and the ask form
 * while the task is open.
 */
export function questionsView(task: AdminTaskDetail, session: Session, now: Date, draft: string | undefined): SafeHtml {
  const open = !isFinal(task.status);
  if (!open && task.questions.length === 0) return html``;
  return html`<section class="card" aria-labelledby="questions">
    <h2 id="questions">Questions to the requester${task.awaiting_answer ? html` <span class="badge warn">Awaiting answer</span>` : ''}</h2>
    ${
      task.questions.length > 0
        ? html`<ul class="messages">${task.questions.map(
            (q) => html`<li id="${q.question_id}">
        <div class="message-head"><strong>You asked</strong> <span class="sub">${when(q.asked_at, now)}</span></div>
        <p class="prose quote">${q.question}</p>
        ${
          q.answer !== null
            ? html`<div class="message-head"><strong>The requester answered</strong> <span class="sub">${when(q.answered_at, now)}</span></div><p class="prose quote answer">${q.answer}</p>`
            : html`<p class="sub">No answer yet.</p>`
        }
      </li>`,
          )}</ul>`
        : ''
    }
    ${
      open
        ? html`<form class="action" method="post" action="/operator/tasks/${task.task_id}/questions">
      ${csrfField(session)}
      <div class="field">
        <label for="question">Ask the requester <span class="hint">— shown on the task, sent by webhook${task.delivery === 'email' ? ' and by e-mail' : ''}</span></label>
        <textarea id="question" name="question" rows="3" maxlength="${QUESTION_MAX}">
${draft ?? ''}</textarea>
      </div>
      <div class="row end"><button class="btn secondary" type="submit">Ask</button></div>
    </form>`
        : ''
    }
  </section>`;
}
