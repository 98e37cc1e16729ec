import { html } from '../../domain/html.js';
import { iso, parseDateTime } from '../../domain/time.js';
import type { MessageRow } from '../../store/messages/messages-repo.js';
import type { TaskRow } from '../../store/tasks/tasks-repo.js';
import { headerText } from '../sanitize.js';
import { documentHtml, type Field, fieldsHtml, fieldsText, type MailParts, quoteHtml, quoteText } from './layout.js';

/** Mails to OPERATOR_EMAIL. Everything agent-written is escaped in HTML and kept out of headers unsanitized. */

export function consoleTaskUrl(baseUrl: string, taskId: string): string {
  return `${baseUrl}/operator/tasks/${encodeURIComponent(taskId)}`;
}

function deadlineText(deadline: string | null): string {
  if (deadline === null) return 'none';
  const parsed = parseDateTime(deadline);
  return parsed ? `${iso(parsed)} (as given: ${deadline})` : deadline;
}

export function taskSubmittedMail(baseUrl: string, task: TaskRow): MailParts {
  const link = consoleTaskUrl(baseUrl, task.id);
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
    { label: 'Deadline', value: deadlineText(task.deadline) },
    {
      label: 'Location',
      value: task.location_required === 1 ? `required: ${task.location_detail ?? '(no detail given)'}` : (task.location_detail ?? 'not required'),
    },
    { label: 'Output format', value: task.output_format },
    { label: 'Delivery', value: task.delivery === 'status_poll' ? 'status_poll (result in operator_notes)' : 'e-mail to the requester' },
    { label: 'Requester', value: task.requester === '' ? '(not given)' : task.requester },
    { label: 'Source', value: task.source },
    { label: 'Submitted', value: task.created_at },
  ];
  if (task.email_unverified === 1) fields.push({ label: 'Contact e-mail', value: 'UNVERIFIED (the MX check could not answer)' });
  const subject = `New task ${task.task_type}: ${headerText(task.description, 80)}`;
  const text = [
    'A new task is waiting for review.',
    '',
    fieldsText(fields),
    '',
    'Description, as the agent wrote it (each line starts with "| "):',
    quoteText(task.description, '(end of description)'),
    '',
    `Review it in the console: ${link}`,
    '',
  ].join('\n');
  const body = html`<p>A new task is waiting for review.</p>
${fieldsHtml(fields)}
<h3>Description</h3>
${quoteHtml(task.description)}
<p><a href="${link}">Review it in the console</a></p>`;
  return { subject, text, html: documentHtml('New task', body) };
}

/** What the outbox knows of a task a message names. */
export interface LinkedTask {
  id: string;
  /** Undefined when no task has that id. */
  task?: Pick<TaskRow, 'task_type' | 'status'>;
}

export function messageReceivedMail(baseUrl: string, message: MessageRow, linked: LinkedTask[]): MailParts {
  const fields: Field[] = [
    { label: 'Message', value: message.id },
    { label: 'From', value: message.sender ?? '(not given)' },
    { label: 'Reply to', value: message.reply_to },
    { label: 'Subject', value: message.subject ?? '(none)' },
    { label: 'Received', value: message.created_at },
  ];
  if (message.email_unverified === 1) fields.push({ label: 'Reply-to address', value: 'UNVERIFIED (the MX check could not answer)' });
  const linkText = (l: LinkedTask) => (l.task ? `${l.id} (${l.task.task_type}, ${l.task.status})` : `${l.id} (no such task)`);
  const taskLines = linked.map((l) => `- ${linkText(l)}${l.task ? `: ${consoleTaskUrl(baseUrl, l.id)}` : ''}`);
  const summary = message.subject ?? message.message;
  const subject = `Message${message.sender ? ` from ${headerText(message.sender, 40)}` : ''}: ${headerText(summary, 80)}`;
  const text = [
    `A message for the operator. Reply to this mail to answer the sender, or answer from the console (your address stays private): ${baseUrl}/operator/messages`,
    '',
    fieldsText(fields),
    ...(linked.length > 0 ? ['', 'It names these tasks:', ...taskLines] : []),
    '',
    'Message, as the sender wrote it (each line starts with "| "):',
    quoteText(message.message, '(end of message)'),
    '',
  ].join('\n');
  const body = html`<p>A message for the operator. Reply to this mail to answer the sender, or <a href="${baseUrl}/operator/messages">answer from the console</a> (your address stays private).</p>
${fieldsHtml(fields)}
${linked.length > 0 ? html`<h3>It names these tasks</h3><ul>${linked.map((l) => html`<li>${l.task ? html`<a href="${consoleTaskUrl(baseUrl, l.id)}">${linkText(l)}</a>` : linkText(l)}</li>`)}</ul>` : ''}
<h3>Message</h3>
${quoteHtml(message.message)}`;
  return { subject, text, html: documentHtml('Message for the operator', body) };
}
