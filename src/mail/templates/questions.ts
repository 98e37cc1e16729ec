import { html } from '../../domain/html.js';
import { statusPageUrl } from '../../domain/network/urls.js';
import type { Question } from '../../domain/questions/questions.js';
import type { TaskRow } from '../../store/tasks/tasks-repo.js';
import { headerText } from '../sanitize.js';
import { documentHtml, type Field, fieldsHtml, fieldsText, type MailParts, quoteHtml } from './layout.js';
import { consoleTaskUrl } from './operator.js';

/**
 * Mails of questions (docs/questions.md): the operator's question to the requester (answered on the status page, never
 * by replying to the mail), the answer to the operator, and an accepted task's passed deadline.
 * Every question and answer is agent- or operator-written: escaped in HTML, kept out of subjects.
 */

/** The status page's answer form of one question. */
function answerFormUrl(baseUrl: string, taskId: string, questionId: string): string {
  return `${statusPageUrl(baseUrl, taskId)}#${encodeURIComponent(questionId)}`;
}

/** To the requester's contact_email: "The operator has a question". */
export function questionAskedMail(baseUrl: string, task: TaskRow, question: Question): MailParts {
  const link = answerFormUrl(baseUrl, task.id, question.question_id);
  const api = `${baseUrl}/api/v1/tasks/${encodeURIComponent(task.id)}/questions/${encodeURIComponent(question.question_id)}/answer`;
  const text = [
    'The operator has a question about your task before going on with it.',
    '',
    fieldsText([
      { label: 'Task', value: task.id },
      { label: 'Type', value: task.task_type },
    ]),
    '',
    'The question:',
    question.question,
    '',
    `Answer it on the task's status page: ${link}`,
    `(Programs: POST {"answer": "..."} to ${api}.)`,
    'Replies to this e-mail are not read.',
    '',
  ].join('\n');
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
  ];
  const body = html`<p>The operator has a question about your task before going on with it.</p>
${fieldsHtml(fields)}
<h3>The question</h3>
${quoteHtml(question.question)}
<p><a href="${link}">Answer it on the task's status page</a>.</p>
<p style="color:#555;font-size:90%">Programs: POST {"answer": "..."} to ${api}. Replies to this e-mail are not read.</p>`;
  return { subject: `The operator has a question: ${task.id}`, text, html: documentHtml('The operator has a question', body) };
}

/** To OPERATOR_EMAIL: the requester answered (the push notice's fallback). */
export function questionAnsweredMail(baseUrl: string, task: TaskRow, question: Question): MailParts {
  const link = consoleTaskUrl(baseUrl, task.id);
  const answer = question.answer ?? '';
  const text = ['The requester answered your question.', '', 'You asked:', question.question, '', 'The answer:', answer, '', `The task: ${link}`, ''].join(
    '\n',
  );
  const body = html`<p>The requester answered your question.</p>
<h3>You asked</h3>
${quoteHtml(question.question)}
<h3>The answer</h3>
${quoteHtml(answer)}
<p><a href="${link}">Open the task</a></p>`;
  return { subject: `Answer on ${task.task_type}: ${headerText(answer, 80)}`, text, html: documentHtml('An answer to your question', body) };
}

/** To OPERATOR_EMAIL: an accepted task's deadline passed before delivery. */
export function deadlinePassedMail(baseUrl: string, task: TaskRow): MailParts {
  const link = consoleTaskUrl(baseUrl, task.id);
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
    { label: 'Deadline', value: task.deadline_at ?? task.deadline ?? '' },
  ];
  const text = ['The deadline of an accepted task passed before it was delivered.', '', fieldsText(fields), '', `The task: ${link}`, ''].join('\n');
  const body = html`<p>The deadline of an accepted task passed before it was delivered.</p>
${fieldsHtml(fields)}
<p><a href="${link}">Open the task</a></p>`;
  return { subject: `Deadline passed: ${task.task_type} ${task.id}`, text, html: documentHtml('Deadline passed', body) };
}
