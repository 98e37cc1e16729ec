import { html, type SafeHtml } from '../../domain/html.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';

/**
 * The status page's message form (contract "Talking with the operator"): ask about the task or
 * withdraw it, without writing JSON. It builds the same payload a program sends to
 * POST /api/v1/messages and goes through the same sendMessage (validation, MX check, limits,
 * blocklist); the task id is filled in through the subject, which links the message to the task.
 */

export const MESSAGE_FIELDS = ['intent', 'message', 'reply_to', 'from'] as const;
export type MessageField = (typeof MESSAGE_FIELDS)[number];
export type MessageIntent = 'ask' | 'withdraw';

export interface MessageFormState {
  values: Partial<Record<MessageField, string>>;
  errors: Partial<Record<MessageField, string[]>>;
  general: SafeHtml[];
  /** Set after a message went through: what was sent. */
  sent?: MessageIntent | undefined;
}

export const EMPTY_MESSAGE_FORM: MessageFormState = { values: {}, errors: {}, general: [] };

const LABELS: Record<MessageField, string> = {
  intent: 'What do you want to do?',
  message: 'Your message',
  reply_to: 'Your e-mail address',
  from: 'Your name (optional)',
};

const WITHDRAW_TEXT = 'Please withdraw this task: I no longer need it.';

function first(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === 'string' ? one : undefined;
}

/** The typed values, for redisplay; only the form's own fields. */
export function messageFormValues(body: unknown): MessageFormState['values'] {
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const values: MessageFormState['values'] = {};
  for (const field of MESSAGE_FIELDS) {
    const value = first(source, field);
    if (value !== undefined) values[field] = value;
  }
  return values;
}

export function intentOf(values: MessageFormState['values']): MessageIntent {
  return values.intent === 'withdraw' ? 'withdraw' : 'ask';
}

/** The POST /api/v1/messages payload the form stands for. */
export function toMessagePayload(taskId: string, values: MessageFormState['values']): Record<string, unknown> {
  const intent = intentOf(values);
  const typed = (values.message ?? '').replace(/\r\n?/g, '\n');
  const payload: Record<string, unknown> = {
    subject: intent === 'withdraw' ? `Withdraw task ${taskId}` : `Question about task ${taskId}`,
    // A withdrawal needs no words: the subject says it all, and the limits still apply to what is typed.
    message: intent === 'withdraw' && typed.trim() === '' ? WITHDRAW_TEXT : typed,
    reply_to: (values.reply_to ?? '').trim(),
  };
  const from = values.from?.trim();
  if (from) payload.from = from;
  return payload;
}

/** Splits the validator's details ("message must be …", "reply_to is required") by field. */
export function messageFieldErrors(details: readonly string[]): { byField: MessageFormState['errors']; general: string[] } {
  const byField: MessageFormState['errors'] = {};
  const general: string[] = [];
  for (const detail of details) {
    const field = MESSAGE_FIELDS.find((f) => f !== 'intent' && detail.startsWith(`${f} `));
    if (field) (byField[field] ??= []).push(detail);
    else general.push(detail);
  }
  return { byField, general };
}

function humanize(field: MessageField, message: string): string {
  const plain: Record<MessageField, string> = { intent: 'The choice', message: 'The message', reply_to: 'The e-mail address', from: 'The name' };
  return message.startsWith(`${field} `) ? `${plain[field]}${message.slice(field.length)}` : message;
}

function describedBy(field: MessageField, state: MessageFormState, hint: boolean): SafeHtml {
  const ids = [hint ? `mh-${field}` : '', state.errors[field] ? `me-${field}` : ''].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : html``;
}

function errorText(field: MessageField, state: MessageFormState): SafeHtml {
  const messages = state.errors[field];
  if (!messages || messages.length === 0) return html``;
  return html`<p class="error" id="me-${field}">${messages.map((m) => humanize(field, m)).join('. ')}</p>`;
}

const isOpen = (task: PublicTask) => task.status === 'submitted' || task.status === 'accepted';

export function messageForm(deps: ServiceDeps, task: PublicTask, state: MessageFormState): SafeHtml {
  const l = deps.config.limits;
  const v = state.values;
  const intent = isOpen(task) ? intentOf(v) : 'ask';
  const problems = MESSAGE_FIELDS.filter((f) => state.errors[f]);
  const invalid = (field: MessageField) => (state.errors[field] ? 'true' : 'false');
  const sent =
    state.sent === 'withdraw'
      ? 'Your withdrawal request reached the operator. The task is withdrawn when the operator confirms it; this page then shows it as declined.'
      : 'Your message reached the operator, who answers by e-mail to the address you gave.';
  return html`<section class="card" id="message" aria-labelledby="message-heading">
<h2 id="message-heading" class="flush-top">Write to the operator</h2>
${state.sent ? html`<div class="alert ok" role="status">${sent}</div>` : ''}
${
  problems.length > 0 || state.general.length > 0
    ? html`<div class="alert bad" role="alert" id="message-problems"><strong>The message was not sent.</strong>
<ul>${state.general.map((g) => html`<li>${g}</li>`)}${problems.map((f) => html`<li><a href="#m-${f}">${humanize(f, state.errors[f]?.[0] ?? LABELS[f])}</a></li>`)}</ul></div>`
    : ''
}
<form method="post" action="/tasks/message" novalidate>
<input type="hidden" name="task_id" value="${task.task_id}">
${
  isOpen(task)
    ? html`<fieldset>
<legend>${LABELS.intent}</legend>
<label class="choice"><input type="radio" id="m-intent" name="intent" value="ask"${intent === 'ask' ? html` checked` : ''}> <span>Ask a question about this task</span></label>
<label class="choice"><input type="radio" name="intent" value="withdraw"${intent === 'withdraw' ? html` checked` : ''}> <span>Withdraw this task <span class="hint">The operator stops work and marks it declined, “Withdrawn at the requester’s request.”</span></span></label>
</fieldset>`
    : html`<input type="hidden" name="intent" value="ask">`
}
<div class="field">
<label for="m-message">${LABELS.message}</label>
<span class="hint" id="mh-message">${l.messageMin} to ${l.messageMax} characters. The task id is added for you. Optional when withdrawing.</span>
<textarea id="m-message" name="message" rows="5" maxlength="${l.messageMax}" aria-invalid="${invalid('message')}"${describedBy('message', state, true)}>
${v.message ?? ''}</textarea>
${errorText('message', state)}
</div>
<div class="two">
<div class="field">
<label for="m-reply_to">${LABELS.reply_to}</label>
<span class="hint" id="mh-reply_to">The operator answers here. Never shown to anyone else.</span>
<input type="email" id="m-reply_to" name="reply_to" value="${v.reply_to ?? ''}" autocomplete="email" maxlength="254" aria-invalid="${invalid('reply_to')}"${describedBy('reply_to', state, true)}>
${errorText('reply_to', state)}
</div>
<div class="field">
<label for="m-from">${LABELS.from}</label>
<input type="text" id="m-from" name="from" value="${v.from ?? ''}" autocomplete="name" maxlength="${l.shortTextMax}" aria-invalid="${invalid('from')}"${describedBy('from', state, false)}>
${errorText('from', state)}
</div>
</div>
<button type="submit">Send to the operator</button>
</form>
</section>`;
}
