import { summary } from '../../docs/documents.js';
import { MCP_TOOLS } from '../../docs/endpoints.js';
import type { LiveFigures } from '../../docs/live.js';
import { html, type SafeHtml } from '../../domain/html.js';
import { OUTPUT_FORMATS } from '../../domain/tasks/task.js';
import type { ServiceDeps } from '../../services/context.js';
import { API_VERSION } from '../../version.js';
import { DESCRIPTION_MIN_WORDS, FORM_FIELDS, type FormField, type FormValues } from './form.js';
import { duration, plural } from './format.js';

export interface FormState {
  values: FormValues;
  errors: Partial<Record<FormField, string[]>>;
  /** Problems that name no field (rate limit, block, duplicate…), shown above the form. */
  general: SafeHtml[];
}

export const EMPTY_FORM: FormState = { values: {}, errors: {}, general: [] };

const LABELS: Record<FormField, string> = {
  task_type: 'Kind of task',
  description: 'What should the human do?',
  location_required: 'Someone needs to be physically present',
  location_detail: 'Where',
  deadline: 'Deadline (optional, UTC)',
  output_format: 'Result format',
  delivery: 'How should the result reach you?',
  contact_email: 'Your e-mail',
  requester: 'Who is asking (optional)',
};

/** "description must be …" → "What should the human do? must be …" reads badly; name the field plainly. */
function humanize(field: FormField, message: string): string {
  const plain: Record<FormField, string> = {
    task_type: 'Kind of task',
    description: 'Description',
    location_required: 'This',
    location_detail: 'Location',
    deadline: 'Deadline',
    output_format: 'Result format',
    delivery: 'Delivery',
    contact_email: 'E-mail',
    requester: 'Requester',
  };
  // The API's value names mean nothing to a person: say which choice of the form it is.
  const said = message.replace('unless delivery is "status_poll"', 'unless the result is shown “On the status page only”');
  return said.startsWith(field) ? `${plain[field]}${said.slice(field.length)}` : said;
}

/** ` aria-describedby="h-x e-x"` naming the hint and the error when there are any. */
function describedBy(field: FormField, state: FormState, hint: boolean): SafeHtml {
  const ids = [hint ? `h-${field}` : '', state.errors[field] ? `e-${field}` : ''].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : html``;
}

function errorText(field: FormField, state: FormState): SafeHtml {
  const messages = state.errors[field];
  if (!messages) return html``;
  return html`<p class="error" id="e-${field}">${messages.map((m) => humanize(field, m)).join('. ')}</p>`;
}

function invalid(field: FormField, state: FormState): string {
  return state.errors[field] ? 'true' : 'false';
}

function textField(
  field: FormField,
  state: FormState,
  options: { type?: string; hint?: string; maxLength?: number; list?: string; autocomplete?: string; required?: boolean },
): SafeHtml {
  return html`<div class="field">
<label for="f-${field}">${LABELS[field]}</label>
${options.hint ? html`<span class="hint" id="h-${field}">${options.hint}</span>` : ''}
<input type="${options.type ?? 'text'}" id="f-${field}" name="${field}" value="${state.values[field] ?? ''}"${options.maxLength ? html` maxlength="${options.maxLength}"` : ''}${options.list ? html` list="${options.list}"` : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${options.required ? html` aria-required="true"` : ''} aria-invalid="${invalid(field, state)}"${describedBy(field, state, Boolean(options.hint))}>
${errorText(field, state)}
</div>`;
}

export function taskForm(deps: ServiceDeps, state: FormState): SafeHtml {
  const l = deps.config.limits;
  const v = state.values;
  const problems = FORM_FIELDS.filter((f) => state.errors[f]);
  const delivery = v.delivery ?? 'email';
  const checked = v.location_required !== undefined && v.location_required !== '' && v.location_required !== 'false';
  return html`<form method="post" action="/tasks" novalidate class="card" aria-labelledby="submit-heading">
<h2 id="submit-heading" class="flush-top">Submit a task</h2>
${
  problems.length > 0 || state.general.length > 0
    ? html`<div class="alert bad" role="alert" tabindex="-1" id="form-problems">
<strong>${problems.length > 0 ? `Please fix ${plural(problems.length, 'field')} below.` : 'The task was not submitted.'}</strong>
<ul>${state.general.map((g) => html`<li>${g}</li>`)}${problems.map((f) => html`<li><a href="#f-${f}">${humanize(f, state.errors[f]?.[0] ?? LABELS[f])}</a></li>`)}</ul>
</div>`
    : ''
}
<div class="field">
<label for="f-task_type">${LABELS.task_type}</label>
<select id="f-task_type" name="task_type" aria-invalid="${invalid('task_type', state)}"${describedBy('task_type', state, false)}>
<option value="">Choose one…</option>
${deps.catalog.map((s) => html`<option value="${s.task_type}"${v.task_type === s.task_type ? html` selected` : ''}>${s.title}</option>`)}
</select>
${errorText('task_type', state)}
</div>
<div class="field">
<label for="f-description">${LABELS.description}</label>
<span class="hint" id="h-description">What to do, where, and what success looks like, e.g. “Photograph the opening hours on the bakery door at 12 Main St; a readable photo is enough.” At least ${DESCRIPTION_MIN_WORDS} words, ${l.descriptionMin} to ${l.descriptionMax} characters; “test” marks a trial.</span>
<textarea id="f-description" name="description" rows="6" maxlength="${l.descriptionMax}" data-min-words="${DESCRIPTION_MIN_WORDS}" aria-invalid="${invalid('description', state)}"${describedBy('description', state, true)}>
${v.description ?? ''}</textarea>
${errorText('description', state)}
</div>
<div class="field">
<label class="check"><input type="checkbox" id="f-location_required" name="location_required" value="true" aria-controls="f-location_detail"${checked ? html` checked` : ''}${describedBy('location_required', state, false)}> ${LABELS.location_required}</label>
${errorText('location_required', state)}
</div>
<div class="two">
${textField('location_detail', state, { hint: `City, address or area; needed when someone must be there. At most ${l.locationDetailMax} characters.`, maxLength: l.locationDetailMax, required: checked })}
${textField('deadline', state, { type: 'datetime-local', hint: 'When the result is needed by, in UTC.' })}
</div>
${textField('output_format', state, { hint: 'Default: text_report. Pick a suggestion or describe your own.', maxLength: l.shortTextMax, list: 'formats' })}
<datalist id="formats">${OUTPUT_FORMATS.map((f) => html`<option value="${f}"></option>`)}</datalist>
<fieldset${describedBy('delivery', state, false)}>
<legend>${LABELS.delivery}</legend>
<label class="choice"><input type="radio" name="delivery" value="email"${delivery !== 'status_poll' ? html` checked` : ''}> <span>By e-mail <span class="hint">The result, with its signed receipt, goes to your e-mail.</span></span></label>
<label class="choice"><input type="radio" name="delivery" value="status_poll"${delivery === 'status_poll' ? html` checked` : ''}> <span>On the status page only <span class="hint">No e-mail needed; ${plural(l.statusPollPerDay, 'such task')} per person per day.</span></span></label>
${errorText('delivery', state)}
</fieldset>
<div class="two">
${textField('contact_email', state, { type: 'email', hint: 'Where the result goes. Never published. Not needed for status-page delivery.', autocomplete: 'email' })}
${textField('requester', state, { hint: 'Your name, company, agent or system.', maxLength: l.shortTextMax, autocomplete: 'organization' })}
</div>
<button type="submit">Submit for human review</button>
<p class="small muted">Next you see the task’s status page. Keep its address: the task id in it is the only key to the task.</p>
</form>`;
}

function liveStrip(live: LiveFigures | null): SafeHtml {
  if (!live) return html``;
  return html`<section aria-labelledby="now-heading">
<h2 id="now-heading" class="eyebrow">Right now</h2>
<div class="figures">
<div class="figure"><b>${live.open_queue}</b><span>open ${live.open_queue === 1 ? 'task' : 'tasks'} in the queue</span></div>
<div class="figure"><b>${duration(live.time_to_first_view_seconds.median)}</b><span>median time to a first human look (${live.window_days} days)</span></div>
<div class="figure"><b>${duration(live.time_to_acceptance_seconds.median)}</b><span>median time to acceptance (${live.window_days} days)</span></div>
<div class="figure"><b>${live.remaining_capacity_today.tasks}</b><span>tasks still accepted today (resets 00:00 UTC)</span></div>
</div>
</section>`;
}

/** After a refused submission: the form alone, so the problems are the first thing seen. */
export function formPageBody(deps: ServiceDeps, state: FormState): SafeHtml {
  return html`<p class="muted small crumbs"><a href="/">Home</a> / Submit a task</p>
${taskForm(deps, state)}
<p class="small muted">What the operator will and will not do is on <a href="/">the home page</a>.</p>`;
}

export function homeBody(deps: ServiceDeps, live: LiveFigures | null, state: FormState): SafeHtml {
  const p = deps.profile;
  const base = deps.config.baseUrl;
  // On a phone the form comes right after the heading and the one-paragraph summary (it starts
  // within the first screen); the rest of the introduction follows it. On a wide screen the form
  // is the right-hand column beside all of the introduction.
  return html`<div class="hero split">
<div class="intro">
<h1>Ask a human to do what software can’t.</h1>
<p class="lead">A person reviews every task, does the ones accepted, and sends you the result with a signed receipt. Free, no account.</p>
</div>
<div id="submit" class="form-column">${taskForm(deps, state)}</div>
<div class="more">
<p>${summary(deps)}</p>
<p class="actions"><a class="button secondary" href="/docs">For agents: API and MCP</a></p>
${liveStrip(live)}
<h2>How it works</h2>
<ol class="steps how" aria-label="How a task goes">
<li class="done"><b>1. Submit</b>Describe the task here, or send it from your agent.</li>
<li class="done"><b>2. Human review</b>The operator accepts it with an estimate, or declines with a reason, usually within ${p.response_target_hours} hours.</li>
<li class="done"><b>3. Delivery</b>The result arrives by e-mail or on the status page, with a signed receipt.</li>
</ol>
</div>
</div>
<h2>What the operator can do</h2>
<div class="grid">
${deps.catalog.map(
  (s) =>
    html`<div class="card"><h3>${s.title}</h3><p class="small">${s.description}</p><p class="small muted">${s.location_required ? 'In person' : 'Remote'} · ${s.estimated_response_time}</p></div>`,
)}
</div>
<h2>Policy</h2>
<div class="card">
<p>${p.policy.review}</p>
<p><strong>The operator will not do:</strong></p>
<ul class="ticks">${p.policy.will_not_do.map((item) => html`<li>${item}</li>`)}</ul>
<p class="small muted">${p.policy.privacy}</p>
<p class="small muted">Operator: ${p.operator.name}. Working hours: ${p.operator.working_hours} (${p.operator.timezone}). Languages: ${p.operator.languages.join(', ')}. Service area: ${p.operator.service_area}</p>
</div>
<h2>For agents</h2>
<div class="grid">
<div class="card"><h3>REST</h3><p class="small">POST a JSON task to <code>${base}/api/${API_VERSION}/tasks</code>, keep the <code>task_id</code>, and poll <code>status_url</code> every few minutes at most. No keys, no accounts.</p><p class="small links"><a href="/docs/api">API reference</a> <a href="/openapi.json">OpenAPI</a></p></div>
<div class="card"><h3>MCP</h3><p class="small">Streamable HTTP at <code>${base}/mcp</code>, no authentication. Tools: ${MCP_TOOLS.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t.name}</code>`)}.</p><p class="small links"><a href="/.well-known/mcp">Server card</a></p></div>
<div class="card"><h3>Documents</h3><p class="small">Everything in one file: <a href="/agent.json">agent.json</a>. Also <a href="/llms.txt">llms.txt</a>, <a href="/.well-known/capabilities.json">capabilities</a>, <a href="/.well-known/human.json">human.json</a>.</p><p class="small links"><a href="/docs">All documents</a></p></div>
</div>`;
}
