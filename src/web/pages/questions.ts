import { html, type SafeHtml } from '../../domain/html.js';
import { ANSWER_MAX, type Question } from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { timeHtml } from './format.js';

/**
 * The status page's questions (docs/questions.md): each question of the operator with its answer, or with
 * a form to answer it (the web-form requester's path). A plain HTML form posting to /tasks/answer:
 * it works without JavaScript, and goes through the same answerQuestion as the API.
 */

export interface AnswerFormState {
  /** The question the form was sent for. */
  questionId?: string | undefined;
  value?: string | undefined;
  /** Problems with the answer field (422). */
  errors?: string[] | undefined;
  /** Problems that are not about the field (the question was answered meanwhile). */
  general?: SafeHtml[] | undefined;
  /** The question just answered (after the redirect). */
  answered?: string | undefined;
}

export const EMPTY_ANSWER_FORM: AnswerFormState = {};

/** "answer must be …" as a person reads it. */
function humanize(detail: string): string {
  return detail.startsWith('answer ') ? `The answer${detail.slice('answer'.length)}` : detail;
}

function answerForm(task: PublicTask, question: Question, index: number, state: AnswerFormState): SafeHtml {
  const mine = state.questionId === question.question_id;
  const errors = mine ? (state.errors ?? []) : [];
  const general = mine ? (state.general ?? []) : [];
  const field = `a-${index}`;
  return html`${general.length > 0 ? html`<div class="alert bad" role="alert">${general.map((g) => html`<p class="flush-top">${g}</p>`)}</div>` : ''}
<form method="post" action="/tasks/answer" novalidate>
<input type="hidden" name="task_id" value="${task.task_id}">
<input type="hidden" name="question_id" value="${question.question_id}">
<div class="field">
<label for="${field}">Your answer</label>
<span class="hint" id="${field}-hint">1 to ${ANSWER_MAX} characters. The operator is told at once.</span>
<textarea id="${field}" name="answer" rows="4" maxlength="${ANSWER_MAX}" aria-invalid="${errors.length > 0 ? 'true' : 'false'}" aria-describedby="${field}-hint${errors.length > 0 ? ` ${field}-error` : ''}">
${mine ? (state.value ?? '') : ''}</textarea>
${errors.length > 0 ? html`<p class="error" id="${field}-error">${errors.map(humanize).join('. ')}</p>` : ''}
</div>
<button type="submit">Send the answer</button>
</form>`;
}

/** The questions card, or nothing when the operator asked none. */
export function questionsSection(task: PublicTask, state: AnswerFormState = EMPTY_ANSWER_FORM): SafeHtml {
  // A problem with no question of this task to stand beside (an unknown question id) is shown on top.
  const stray = task.questions.some((q) => q.question_id === state.questionId) ? [] : (state.general ?? []);
  if (task.questions.length === 0 && stray.length === 0) return html``;
  return html`<section class="card" id="questions" aria-labelledby="questions-heading">
<h2 id="questions-heading" class="flush-top">Questions from the operator</h2>
${stray.length > 0 ? html`<div class="alert bad" role="alert">${stray.map((g) => html`<p class="flush-top">${g}</p>`)}</div>` : ''}
${state.answered ? html`<div class="alert ok" role="status">Your answer reached the operator.</div>` : ''}
${task.awaiting_answer ? html`<p>The operator needs your answer to go on with this task.</p>` : ''}
${task.questions.map(
  (q, i) => html`<article class="question" id="${q.question_id}" aria-labelledby="${q.question_id}-h">
<h3 id="${q.question_id}-h">Question ${i + 1} <span class="muted small">asked ${timeHtml(q.asked_at)}</span></h3>
<p class="text">${q.question}</p>
${
  q.answer !== null
    ? html`<p class="muted small flush-top">Your answer, ${timeHtml(q.answered_at)}:</p><p class="text">${q.answer}</p>`
    : answerForm(task, q, i, state)
}
</article>`,
)}
</section>`;
}
