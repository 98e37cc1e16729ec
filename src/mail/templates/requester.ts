import { html, type SafeHtml } from '../../domain/html.js';
import { statusPageUrl, statusUrl } from '../../domain/network/urls.js';
import type { TaskRow } from '../../store/tasks/tasks-repo.js';
import { attachedToMail, deliveredFiles } from '../attachments.js';
import { documentHtml, type Field, fieldsHtml, fieldsText, type MailParts, quoteHtml } from './layout.js';

/**
 * Mails to the requester's contact_email on acceptance, delivery and rejection. The requester
 * answers through the message form on the task's status page (or POST /api/v1/messages naming the
 * task id); no Reply-To: the operator's own address is not handed out to agents.
 */

function urls(baseUrl: string, taskId: string) {
  return {
    statusPage: statusPageUrl(baseUrl, taskId),
    statusUrl: statusUrl(baseUrl, taskId),
    jwks: `${baseUrl}/.well-known/jwks.json`,
    messages: `${baseUrl}/api/v1/messages`,
    messageForm: `${baseUrl}/tasks?id=${encodeURIComponent(taskId)}#message`,
  };
}

function descriptionExcerpt(description: string): string {
  const chars = [...description];
  return chars.length <= 300 ? description : `${chars.slice(0, 299).join('')}…`;
}

function footer(baseUrl: string, taskId: string) {
  const u = urls(baseUrl, taskId);
  return {
    text: `To ask the operator about this task or withdraw it, use the form on its status page: ${u.messageForm}\n(Programs: POST a message to ${u.messages} naming ${taskId}.)\nThis mail was sent because this address was given as contact_email for the task.`,
    html: html`<p style="color:#555;font-size:90%">To ask the operator about this task or withdraw it, use <a href="${u.messageForm}">the form on its status page</a>. (Programs: POST a message to ${u.messages} naming ${taskId}.)<br>This mail was sent because this address was given as contact_email for the task.</p>`,
  };
}

export function taskAcceptedMail(baseUrl: string, task: TaskRow): MailParts {
  const u = urls(baseUrl, task.id);
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
    { label: 'Estimated delivery', value: task.eta ?? 'not given yet' },
    { label: 'Status page', value: u.statusPage, href: u.statusPage },
    { label: 'Status API', value: u.statusUrl },
  ];
  const foot = footer(baseUrl, task.id);
  const text = [
    'Your task was accepted: a human operator will perform it.',
    '',
    fieldsText(fields),
    '',
    'Your request:',
    descriptionExcerpt(task.description),
    '',
    'The result will be e-mailed to this address when it is delivered.',
    '',
    foot.text,
    '',
  ].join('\n');
  const body = html`<p>Your task was accepted: a human operator will perform it.</p>
${fieldsHtml(fields)}
<h3>Your request</h3>
${quoteHtml(descriptionExcerpt(task.description))}
<p>The result will be e-mailed to this address when it is delivered.</p>
${foot.html}`;
  return { subject: `Task accepted: ${task.id}`, text, html: documentHtml('Task accepted', body) };
}

/** The delivered files, each with its SHA-256: attached, or as links when they are too big for mail. */
function filesSection(task: TaskRow): { text: string[]; html: SafeHtml | '' } {
  const files = deliveredFiles(task);
  if (files.length === 0) return { text: [], html: '' };
  const attached = attachedToMail(files);
  const intro = attached
    ? `Files (${files.length}), attached to this mail; each SHA-256 is signed in the receipt:`
    : `Files (${files.length}), too large together to attach: download them from the links; each SHA-256 is signed in the receipt:`;
  const line = (f: (typeof files)[number]) => `${f.name} (${f.media_type}, ${f.size} bytes) sha256 ${f.sha256}${attached ? '' : ` ${f.url}`}`;
  return {
    text: [intro, ...files.map((f) => `- ${line(f)}`), ''],
    html: html`<h3>Files</h3><p>${intro}</p><ul>${files.map(
      (f) =>
        html`<li>${attached ? f.name : html`<a href="${f.url}">${f.name}</a>`} <span style="color:#555">(${f.media_type}, ${f.size} bytes)</span><br><code style="font-size:85%;word-break:break-all">sha256 ${f.sha256}</code></li>`,
    )}</ul>`,
  };
}

export function taskDeliveredMail(baseUrl: string, task: TaskRow): MailParts {
  const u = urls(baseUrl, task.id);
  const files = filesSection(task);
  const deliverable = task.operator_notes ?? '';
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
    { label: 'Delivered', value: task.delivered_at ?? task.updated_at },
    { label: 'deliverable_sha256', value: task.deliverable_sha256 ?? '(none)' },
    { label: 'receipt_issued_at', value: task.receipt_issued_at ?? '(none)' },
    { label: 'Status page', value: u.statusPage, href: u.statusPage },
  ];
  const verify = [
    'How to verify the receipt:',
    `1. It is a compact JWS signed with EdDSA (Ed25519). The public keys are at ${u.jwks}; pick the key by the "kid" in the JWS header.`,
    `2. Its payload binds task_id ${task.id}, deliverable_sha256 and the timeline of the task.`,
    '3. deliverable_sha256 is the SHA-256 (hex) of the UTF-8 bytes of the deliverable exactly as returned in operator_notes by the status API.',
    `4. Or, from a checkout of the service's source: npm run verify-receipt -- ${task.id} --base-url ${baseUrl} (checks the signature, the task id and the deliverable in one go).`,
    ...(files.text.length > 0
      ? ['5. Files: the receipt lists each file with its SHA-256; save them into one directory and add --files <that directory> to the command above.']
      : []),
  ];
  const foot = footer(baseUrl, task.id);
  const text = [
    'Your task was delivered. The result is below.',
    '',
    fieldsText(fields),
    '',
    'Deliverable:',
    deliverable,
    '',
    ...files.text,
    'Receipt:',
    task.receipt ?? '(none)',
    '',
    ...verify,
    '',
    foot.text,
    '',
  ].join('\n');
  const body = html`<p>Your task was delivered. The result is below.</p>
${fieldsHtml(fields)}
<h3>Deliverable</h3>
${quoteHtml(deliverable)}
${files.html}
<h3>Receipt</h3>
<pre style="white-space:pre-wrap;word-break:break-all;font-size:85%">${task.receipt ?? '(none)'}</pre>
<h3>${verify[0]}</h3>
<ol>${verify.slice(1).map((line) => html`<li>${line.replace(/^\d\. /, '')}</li>`)}</ol>
${foot.html}`;
  return { subject: `Task delivered: ${task.id}`, text, html: documentHtml('Task delivered', body) };
}

export function taskRejectedMail(baseUrl: string, task: TaskRow): MailParts {
  const u = urls(baseUrl, task.id);
  const reason = task.operator_notes !== null && task.operator_notes.trim() !== '' ? task.operator_notes : 'No reason was given.';
  const fields: Field[] = [
    { label: 'Task', value: task.id },
    { label: 'Type', value: task.task_type },
    { label: 'Status page', value: u.statusPage, href: u.statusPage },
  ];
  const foot = footer(baseUrl, task.id);
  const text = [
    'Your task was rejected by the operator and will not be performed.',
    '',
    fieldsText(fields),
    '',
    'Reason:',
    reason,
    '',
    'Your request:',
    descriptionExcerpt(task.description),
    '',
    foot.text,
    '',
  ].join('\n');
  const body = html`<p>Your task was rejected by the operator and will not be performed.</p>
${fieldsHtml(fields)}
<h3>Reason</h3>
${quoteHtml(reason)}
<h3>Your request</h3>
${quoteHtml(descriptionExcerpt(task.description))}
${foot.html}`;
  return { subject: `Task rejected: ${task.id}`, text, html: documentHtml('Task rejected', body) };
}

/** The id of an existing task, to its contact address, after another client resubmitted it. */
export function duplicateNoticeMail(baseUrl: string, taskId: string): MailParts {
  const u = urls(baseUrl, taskId);
  const fields: Field[] = [
    { label: 'Task', value: taskId },
    { label: 'Status page', value: u.statusPage, href: u.statusPage },
    { label: 'Status API', value: u.statusUrl },
  ];
  const foot = footer(baseUrl, taskId);
  const intro =
    'The same task was submitted again for this address, from another client, and was refused as a duplicate. The task already submitted is below: poll it instead of submitting it again. The task id is the key to the task: share it only with whoever should see it.';
  const text = [intro, '', fieldsText(fields), '', 'If you did not submit this task, you can ignore this mail.', '', foot.text, ''].join('\n');
  const body = html`<p>${intro}</p>
${fieldsHtml(fields)}
<p>If you did not submit this task, you can ignore this mail.</p>
${foot.html}`;
  return { subject: `Your task already exists: ${taskId}`, text, html: documentHtml('Your task already exists', body) };
}
