import { html } from '../../domain/html.js';
import type { MessageRow } from '../../store/messages/messages-repo.js';
import { documentHtml, type MailParts, quoteHtml } from './layout.js';

/**
 * The operator's answer to a message, to the message's reply_to. It quotes what was asked and
 * points at the status pages' message form for the next question: replies to this mail go to
 * MAIL_FROM, which nobody reads (the operator's own address is not handed out).
 */

const QUOTE_MAX = 2000;

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length <= QUOTE_MAX ? text : `${chars.slice(0, QUOTE_MAX - 1).join('')}…`;
}

/** "Re: <subject>", without stacking "Re: Re:". */
export function replySubject(subject: string | null): string {
  const base = subject?.trim() ? subject.trim() : 'Your message to the operator';
  return /^re:/i.test(base) ? base : `Re: ${base}`;
}

export function messageReplyMail(baseUrl: string, message: MessageRow, reply: string, taskIds: readonly string[]): MailParts {
  const forms = taskIds.map((id) => `${baseUrl}/tasks?id=${encodeURIComponent(id)}#message`);
  const next =
    forms.length > 0
      ? `To answer, use the message form on the task's status page: ${forms.join(' , ')}`
      : `To answer, send another message: POST ${baseUrl}/api/v1/messages (or use the form on a task's status page).`;
  const quoted = excerpt(message.message)
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  const text = [
    reply,
    '',
    '-- ',
    `The operator of ${baseUrl}`,
    '',
    `On ${message.created_at} you wrote:`,
    quoted,
    '',
    next,
    'Replies to this e-mail are not read.',
    '',
  ].join('\n');
  const body = html`<div style="white-space:pre-wrap">${reply}</div>
<p style="color:#555">— The operator of ${baseUrl}</p>
<p style="color:#555;font-size:90%">On ${message.created_at} you wrote:</p>
${quoteHtml(excerpt(message.message))}
<p style="color:#555;font-size:90%">${
    forms.length > 0
      ? html`To answer, use the message form on the task's status page: ${forms.map((f, i) => html`${i > 0 ? ', ' : ''}<a href="${f}">${f}</a>`)}.`
      : html`To answer, send another message: POST ${baseUrl}/api/v1/messages.`
  } Replies to this e-mail are not read.</p>`;
  return { subject: replySubject(message.subject), text, html: documentHtml('Reply from the operator', body) };
}
