import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminTaskDetail } from '../../../domain/tasks/admin-schemas.js';
import { canTransition, outputFormatLabel } from '../../../domain/tasks/task.js';
import type { AuditEntry } from '../../../domain/team/team-schemas.js';
import { deliverableSha256 } from '../../../receipts/payload.js';
import type { OperatorAttachment } from '../../../services/attachments/attachments.js';
import type { HeldAction } from '../../../services/console/held-actions.js';
import type { WebhookEventView } from '../../../services/delivery/webhooks.js';
import { resultTable } from '../../pages/result-table.js';
import type { Session } from '../auth/session.js';
import { csrfField, deliveryWords, humanType, statusPill, taskTitle, utcInputValue, when } from '../layout.js';
import { isOverdue, testBadge } from '../queue/queue-view.js';
import { asksWithdrawal, type BlockDraft, blockSenderForm, conversation, withdrawForm } from '../talk/talk-view.js';
import { auditView } from './audit-view.js';
import { filesView } from './files-view.js';
import { questionsView } from './questions-view.js';
import { type ResultDraft, resultFields } from './result-form-view.js';
import { schemaOutline } from './schema-outline.js';

export interface TaskViewOptions {
  task: AdminTaskDetail;
  session: Session;
  now: Date;
  /** A banner above the task (the outcome of the last action). */
  notice?: SafeHtml | undefined;
  /** What the operator typed before a refused action, so nothing is lost. */
  draft?: { notes?: string | undefined; reason?: string | undefined; eta?: string | undefined };
  statusPageUrl: string;
  /** What the operator chose before a refused block. */
  block?: BlockDraft;
  /** Evidence files attached so far. */
  files: OperatorAttachment[];
  limits: { maxPerTask: number; maxBytes: number };
  /** Webhook events of the task (none when it has no callback URL). */
  webhooks?: WebhookEventView[];
  /** A task with a response schema: what the operator entered in its form, and its problems. */
  result?: ResultDraft;
  /** The assignment card (who has the task, Take it, Give to…). */
  assignment?: SafeHtml;
  /** The audit log's entries of the task, and the names of the operators they mention. */
  audit?: { entries: AuditEntry[]; names: ReadonlyMap<string, string> };
  /** A refused question, kept in the ask form. */
  questionDraft?: string | undefined;
  /** When each message naming the task was done (null: waiting). */
  messageDone?: ReadonlyMap<string, string | null>;
  /**
   * An accept, reject or delivery held for undo: until it commits the page shows it in progress
   * ("Accepting…", its Undo in the banner above) instead of the old status and the actions it replaced.
   */
  held?: HeldAction | undefined;
}

const HELD_STATE: Record<string, [status: string, words: string]> = {
  accept: ['accepted', 'Accepting…'],
  reject: ['rejected', 'Rejecting…'],
  deliver: ['delivered', 'Delivering…'],
};

/** The status pill: the held change in progress, or the task's status. */
function statusNow(task: AdminTaskDetail, held: HeldAction | undefined): SafeHtml {
  const state = held ? HELD_STATE[held.kind] : undefined;
  return state ? html`<span class="pill st-${state[0]}" data-held-state>${state[1]}</span>` : statusPill(task.status);
}

/** While a change is held, the card that stood for the actions says so (Undo is in the banner at the top). */
function heldCard(held: HeldAction, now: Date): SafeHtml {
  return html`<section class="card" aria-labelledby="act"><h2 id="act">${HELD_STATE[held.kind]?.[1] ?? held.kind}</h2>
    <p class="sub">Committed ${when(held.commit_at, now)}; until then Undo, at the top of the page, takes it back.</p></section>`;
}

const DEFAULT_ETA_HOURS = 24;
const REASONS: [string, string][] = [
  ['Out of scope', 'Out of scope for this service: it does not need a human in the loop.'],
  ['Unsafe', 'Rejected at review: the task is unsafe, harmful or illegal.'],
  ['Privacy', 'Rejected at review: the task would invade someone’s privacy.'],
  ['Needs detail', 'Rejected: the request lacks the detail needed to do it. Please resubmit with where, what and what success looks like.'],
];

function fields(task: AdminTaskDetail, now: Date): SafeHtml {
  const overdue = isOverdue(task, now);
  return html`<dl class="kv">
    <dt>Type</dt><dd>${humanType(task.task_type)}</dd>
    <dt>Output format</dt><dd>${outputFormatLabel(task.output_format)}</dd>
    <dt>Delivery</dt><dd>${task.delivery === 'status_poll' ? 'Checks the status page — the result is shown there' : 'By e-mail to the requester'}</dd>
    <dt>Contact e-mail</dt><dd>${
      task.contact_email
        ? html`<a href="mailto:${encodeURIComponent(task.contact_email).replace(/%40/g, '@')}">${task.contact_email}</a> ${task.email_unverified ? html`<span class="badge warn" title="The MX check could not run at submission">Address not checked</span>` : html`<span class="badge">Checked address</span>`}`
        : html`<span class="sub">none: the requester checks the status page</span>`
    }</dd>
    <dt>Budget</dt><dd>${task.budget_usd === null ? html`<span class="sub">none (ignored in the pilot)</span>` : html`${task.budget_usd} USD <span class="sub">(ignored in the pilot)</span>`}</dd>
    <dt>Source</dt><dd>${task.source === 'web_form' ? 'The web form' : 'The API (an agent)'}</dd>
    <dt>Submitted</dt><dd>${when(task.created_at, now)}</dd>
    <dt>First seen</dt><dd>${when(task.seen_by_operator_at, now)}</dd>
    ${task.eta ? html`<dt>ETA</dt><dd class="${overdue ? 'overdue-text' : ''}">${when(task.eta, now)}${overdue ? ' — overdue' : ''}</dd>` : ''}
  </dl>
  <details class="tech"><summary>Technical details</summary><dl class="kv">
    <dt>Type</dt><dd class="mono">${task.task_type}</dd>
    <dt>Request hash</dt><dd class="mono">${task.request_sha256}</dd>
  </dl></details>`;
}

/** What the decision needs, right under the description, so a phone shows it before the actions. */
function keyFacts(task: AdminTaskDetail, now: Date): SafeHtml {
  return html`<dl class="kv key-facts">
    <dt>Location</dt><dd>${task.location_required ? html`<strong>Required</strong> — ${task.location_detail ?? html`<span class="badge warn">no location given</span>`}` : (task.location_detail ?? html`<span class="sub">not required</span>`)}</dd>
    <dt>Deadline</dt><dd>${task.deadline ? when(task.deadline, now) : html`<span class="sub">none</span>`}</dd>
    <dt>Result by</dt><dd>${deliveryWords(task.delivery)}</dd>
    <dt>Requester</dt><dd>${task.requester || html`<span class="sub">not given</span>`}</dd>
    <dt>Agent</dt><dd>${task.agent ? html`<span class="badge">Verified</span> key <code>${task.agent.key_id}</code> of ${task.agent.directory}` : html`<span class="sub">unsigned (counted by address)</span>`}</dd>
  </dl>`;
}

function history(task: AdminTaskDetail, now: Date): SafeHtml {
  return html`<ol class="timeline">${task.status_history.map((h) => html`<li>${statusPill(h.status)} <span class="sub">${when(h.at, now)}</span></li>`)}</ol>`;
}

function etaField(id: string, value: Date, label: string): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${label} <span class="hint">(<span data-tz>UTC</span>)</span></label>
    <input id="${id}" type="datetime-local" name="eta_local" value="${utcInputValue(value)}" data-eta required>
    <input type="hidden" name="eta_offset" value="0">
    <div class="row">
      ${[
        [2, '+2 h'],
        [6, '+6 h'],
        [24, '+1 day'],
        [72, '+3 days'],
      ].map(([hours, text]) => html`<button type="button" class="chip" data-eta-hours="${hours}" hidden>${text}</button>`)}
    </div>
  </div>`;
}

// The HTML parser drops a newline right after <textarea>, so the forms always write one there:
// notes that begin with a line break keep it (and keep their hash).
/** Reject, in a card of its own below the next step: a final action kept apart from the primary one. */
function rejectCard(task: AdminTaskDetail, session: Session, reason: string | undefined): SafeHtml {
  return html`<section class="card danger-zone" aria-labelledby="rej"><h2 id="rej">Reject</h2><form class="action" method="post" action="/operator/tasks/${task.task_id}/reject" data-confirm="Reject this task? This is final.">
    ${csrfField(session)}
    <div class="field">
      <label for="reason">Reason <span class="hint">— shown to the requester</span></label>
      <textarea id="reason" name="operator_notes" rows="3" maxlength="50000">
${reason ?? ''}</textarea>
      <div class="row">${REASONS.map(([label, text]) => html`<button type="button" class="chip" data-fill="reason" data-text="${text}" hidden>${label}</button>`)}</div>
    </div>
    <div class="row end"><button class="btn danger" type="submit">Reject task</button></div>
  </form></section>`;
}

function actions(options: TaskViewOptions): SafeHtml {
  const { task, session, now, draft = {} } = options;
  const defaultEta = new Date(now.getTime() + DEFAULT_ETA_HOURS * 3600_000);
  // Submitted, or an imported task in a retired status (under_review, in_progress): same choices.
  if (canTransition(task.status, 'accepted')) {
    return html`<section class="card" aria-labelledby="act">
      <h2 id="act">Review</h2>
      ${withdrawForm(task, session)}
      ${task.response_schema !== null ? schemaOutline(task.response_schema) : ''}
      <form class="action" method="post" action="/operator/tasks/${task.task_id}/accept">
        ${csrfField(session)}
        ${etaField('eta', defaultEta, 'Delivery estimate')}
        <button class="btn" type="submit">Accept task</button>
      </form>
    </section>`;
  }
  if (task.status === 'accepted' && task.response_schema !== null) return structuredDeliver(options, task.response_schema);
  if (task.status === 'accepted') {
    const notes = draft.notes ?? task.operator_notes ?? '';
    // A task needing several approvals: delivering proposes (docs/approvals.md).
    const proposes = task.approvals !== undefined;
    return html`<section class="card" aria-labelledby="act">
      <h2 id="act">${proposes ? 'Propose the deliverable' : 'Deliver'}</h2>
      ${withdrawForm(task, session)}
      <form class="action" method="post" action="/operator/tasks/${task.task_id}/deliver" data-confirm="${proposes ? 'Propose this deliverable? Other operators approve it before it is delivered.' : 'Deliver and sign the receipt? The notes are frozen once delivered.'}">
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="0" data-confirmed>
        <div class="field">
          <label for="notes">Result for the requester <span class="hint">— ${task.delivery === 'status_poll' ? 'shown on their status page' : 'e-mailed to them and shown on their status page'}</span></label>
          <textarea id="notes" name="operator_notes" rows="10" maxlength="50000" data-sha256="notes-hash">
${notes}</textarea>
          <details class="tech"><summary>Technical details</summary><p class="hint">SHA-256 the receipt will sign: <code class="hash" id="notes-hash">${deliverableSha256(notes)}</code></p></details>
        </div>
        <div class="row end">
          <button class="btn secondary" type="submit" formaction="/operator/tasks/${task.task_id}/notes" data-no-confirm>Save draft</button>
          <button class="btn" type="submit">${proposes ? 'Propose for approval' : html`Deliver &amp; sign receipt`}</button>
        </div>
      </form>
    </section>`;
  }
  if (task.status === 'delivered') {
    return html`<section class="card" aria-labelledby="act">
      <h2 id="act">Delivered · receipt</h2>
      ${task.result !== null ? resultTable(task.result, task.response_schema) : html`<p class="prose quote">${task.operator_notes ?? ''}</p>`}
      <dl class="kv">
        <dt>Delivered</dt><dd>${when(task.delivered_at, now)}</dd>
        <dt>Receipt issued</dt><dd>${when(task.receipt_issued_at ?? null, now)}</dd>
      </dl>
      <details class="tech"><summary>Technical details</summary>
        <dl class="kv"><dt>Result SHA-256</dt><dd class="mono">${task.deliverable_sha256 ?? ''}</dd></dl>
        <p class="sub">Signed receipt (compact JWS):</p><p class="mono" id="receipt">${task.receipt ?? ''}</p><button type="button" class="btn small secondary" data-copy="receipt" hidden>Copy receipt</button>
        <p class="hint">Anyone can check it: <code>npm run verify-receipt -- ${task.task_id}</code></p>
      </details>
    </section>`;
  }
  return html`<section class="card" aria-labelledby="act">
    <h2 id="act">${task.status === 'rejected' ? 'Rejected' : `Status ${task.status}`}</h2>
    ${task.operator_notes ? html`<p class="prose quote">${task.operator_notes}</p>` : html`<p class="sub">No reason was given.</p>`}
    ${task.rejected_at ? html`<p class="sub">Rejected ${when(task.rejected_at, now)}</p>` : ''}
  </section>`;
}

const WEBHOOK_STATE: Record<string, string> = { pending: 'warn', delivered: 'ok', failed: 'danger', gone: 'danger' };

/** Each event with its attempts; anything not delivered has a retry (made due now, fresh budget). */
function webhooks(list: WebhookEventView[], session: Session, now: Date): SafeHtml {
  return html`<section class="card" aria-labelledby="hooks"><h2 id="hooks">Webhooks</h2>
    <p class="sub">To ${list[0]?.target ?? ''}</p>
    <ul class="messages">${list.map(
      (w) => html`<li>
        <div class="message-head"><strong class="mono">${w.event}</strong> <span class="badge ${WEBHOOK_STATE[w.status] ?? ''}">${w.status}</span><span class="sub">${w.attempts} attempt${w.attempts === 1 ? '' : 's'}</span></div>
        ${w.last_error ? html`<p class="sub">Last error: ${w.last_error}</p>` : ''}
        ${w.next_attempt_at ? html`<p class="sub">Next attempt ${when(w.next_attempt_at, now)}</p>` : ''}
        ${w.delivered_at ? html`<p class="sub">Delivered ${when(w.delivered_at, now)}</p>` : ''}
        ${
          w.attempt_log.length > 0
            ? html`<details><summary>Attempts</summary><ol class="timeline">${w.attempt_log.map(
                (a) =>
                  html`<li><span class="mono">${a.status_code === null ? 'no answer' : String(a.status_code)}</span> <span class="sub">${when(a.at, now)} · ${a.duration_ms} ms${a.error ? html` · ${a.error}` : ''}</span></li>`,
              )}</ol></details>`
            : ''
        }
        ${w.status !== 'delivered' ? html`<form method="post" action="/operator/webhooks/${w.id}/retry">${csrfField(session)}<button class="btn small secondary" type="submit">Retry now</button></form>` : ''}
      </li>`,
    )}</ul>
  </section>`;
}

export function taskView(options: TaskViewOptions): SafeHtml {
  const { task, now, session } = options;
  const withdrawal = task.messages.some(asksWithdrawal);
  return html`<div data-task-id="${task.task_id}"><a class="back" href="/operator">← Queue</a></div>
    ${options.notice ?? ''}
    <div class="page-head">
      <div>
        <div class="row">${statusNow(task, options.held)}${testBadge(task)}${isOverdue(task, now) ? html`<span class="badge danger">Overdue</span>` : ''}${task.email_unverified ? html`<span class="badge warn">Address not checked</span>` : ''}${withdrawal ? html`<span class="badge danger">Withdrawal requested?</span>` : ''}${task.awaiting_answer ? html`<span class="badge warn">Awaiting answer</span>` : ''}</div>
        <h1>${taskTitle(task, 90)}</h1>
        <p class="sub">${humanType(task.task_type)}</p>
        <div class="idline"><span class="mono nobreak" id="task-id">${task.task_id}</span><button type="button" class="btn small ghost" data-copy="task-id" hidden>Copy id</button><a href="${options.statusPageUrl}" target="_blank" rel="noopener noreferrer">Public status page ↗</a></div>
      </div>
    </div>
    <div class="grid-2">
      <div>
        <section class="card" aria-labelledby="req"><h2 id="req">What the agent asked</h2><p class="prose quote">${task.description}</p>${keyFacts(task, now)}</section>
        ${filesView({ taskId: task.task_id, status: task.status, files: options.files, session: options.session, locationRequired: task.location_required, ...options.limits })}
        ${approvalCard(task, now)}
        ${options.held ? heldCard(options.held, now) : actions(options)}
        ${questionsView(task, session, now, options.questionDraft)}
        ${task.status === 'accepted' && !options.held ? moveEta(task, session, now) : ''}
        ${canTransition(task.status, 'rejected') && !options.held ? rejectCard(task, session, options.draft?.reason) : ''}
        <section class="card" aria-labelledby="msgs"><h2 id="msgs">Messages naming this task</h2>${conversation(task, session, now, options.messageDone)}</section>
      </div>
      <div>
        ${options.assignment ?? ''}
        <section class="card" aria-labelledby="det"><h2 id="det">Details</h2>${fields(task, now)}</section>
        <section class="card" aria-labelledby="his"><h2 id="his">History</h2>${history(task, now)}</section>
        ${options.audit ? auditView(options.audit.entries, options.audit.names, now) : ''}
        ${options.webhooks && options.webhooks.length > 0 ? webhooks(options.webhooks, options.session, now) : ''}
        ${blockSenderForm(task, options.session, options.block)}
      </div>
    </div>
    ${options.held ? '' : actionBar(task, session)}`;
}

/** Where the approvals of a task needing several stand (docs/approvals.md): the proposal, or why it was sent back. */
function approvalCard(task: AdminTaskDetail, now: Date): SafeHtml | '' {
  if (!task.approvals || task.status !== 'accepted') return '';
  const { required, given } = task.approvals;
  return html`<section class="card" aria-labelledby="appr"><h2 id="appr">Approvals: ${given} of ${required}</h2>
    ${task.proposal ? html`<p>Proposed by ${task.proposal.proposed_by}, ${when(task.proposal.proposed_at, now)}: waiting in <a href="/operator/approve">Approve</a>.</p><p class="prose quote">${task.proposal.operator_notes}</p>` : html`<p class="sub">Delivering proposes the deliverable: ${required} operators must approve it, yours included.</p>`}
    ${task.sent_back && !task.proposal ? html`<div class="flash error" role="note"><strong>Sent back by ${task.sent_back.by}, ${when(task.sent_back.at, now)}:</strong> <span class="prose">${task.sent_back.reason}</span></div>` : ''}
  </section>`;
}

/**
 * The deliver step of a task with a response schema: the schema as a form, and a raw JSON editor
 * beside it (docs/answers.md). "Check answers" asks the server without delivering; delivering confirms
 * once, as for text, with the hash of the result's canonical JSON.
 */
function structuredDeliver(options: TaskViewOptions, schema: Record<string, unknown>): SafeHtml {
  const { task, session, result = {} } = options;
  const formAction = `/operator/tasks/${task.task_id}/result`;
  return html`<section class="card" aria-labelledby="act">
      <h2 id="act">Deliver</h2>
      ${withdrawForm(task, session)}
      <p class="hint">The requester asked for a structured answer: fill the form (or paste JSON below). It is checked against the task’s schema; the receipt signs its canonical JSON.</p>
      <form class="action" method="post" action="${formAction}" data-confirm="Deliver and sign the receipt? The answer is frozen once delivered.">
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="0" data-confirmed>
        <!-- Enter in a field submits the first button: make it "check", never a row's removal. -->
        <button class="default-check" type="submit" name="form_op" value="check" formnovalidate data-no-confirm tabindex="-1" aria-hidden="true">Check answers</button>
        ${resultFields(schema, result, formAction)}
        <div class="row end">
          <button class="btn secondary" type="submit" name="form_op" value="check" formnovalidate data-no-confirm>Check answers</button>
          <button class="btn" type="submit" name="result_source" value="form">Deliver &amp; sign receipt</button>
        </div>
        <details${result.json !== undefined ? html` open` : ''}>
          <summary>Raw JSON editor</summary>
          <div class="field">
            <label for="result-json">Result as JSON</label>
            <textarea id="result-json" name="result_json" rows="10" class="mono">${result.json ?? JSON.stringify(result.value ?? {}, null, 2)}</textarea>
          </div>
          <div class="row end"><button class="btn" type="submit" name="result_source" value="json">Deliver this JSON &amp; sign receipt</button></div>
        </details>
      </form>
    </section>`;
}

/** The accepted task's ETA, in a card of its own below the deliver form. */
function moveEta(task: AdminTaskDetail, session: Session, now: Date): SafeHtml {
  const defaultEta = new Date(now.getTime() + DEFAULT_ETA_HOURS * 3600_000);
  return html`<section class="card" aria-labelledby="eta-h"><h2 id="eta-h">ETA</h2><form class="action" method="post" action="/operator/tasks/${task.task_id}/eta">
        ${csrfField(session)}
        ${etaField('eta', task.eta ? new Date(task.eta) : defaultEta, 'Move the ETA')}
        <button class="btn secondary" type="submit">Update ETA</button>
      </form></section>`;
}

/**
 * The next step, always in reach at the bottom of a phone's screen: Accept (one tap, ETA in a
 * day), Deliver or Ask. Links to the forms above, so it works without script; Reject is never here.
 */
function actionBar(task: AdminTaskDetail, session: Session): SafeHtml | '' {
  if (canTransition(task.status, 'accepted')) {
    return html`<div class="action-bar narrow-only"><form method="post" action="/operator/tasks/${task.task_id}/accept">${csrfField(session)}<button class="btn" type="submit" name="eta_hours" value="24">Accept, 1 day</button></form><a class="btn secondary" href="#act">Pick ETA</a><a class="btn secondary" href="#question">Ask</a></div>`;
  }
  if (task.status === 'accepted') {
    return html`<div class="action-bar narrow-only"><a class="btn" href="${task.response_schema !== null ? '#act' : '#notes'}">Deliver</a><a class="btn secondary" href="#question">Ask</a></div>`;
  }
  return '';
}
