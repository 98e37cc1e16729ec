import { html, type SafeHtml } from '../../domain/html.js';
import { type Block, toMarkdown } from '../../domain/markup.js';
import { attachmentPath } from '../../domain/network/urls.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal, outputFormatLabel, STATUS_LABELS, type TaskStatus } from '../../domain/tasks/task.js';
import { receiptIssuer, sameIssuer } from '../../receipts/issuer.js';
import type { ServiceDeps } from '../../services/context.js';
import { API_VERSION } from '../../version.js';
import { timeHtml } from './format.js';
import { EMPTY_MESSAGE_FORM, type MessageFormState, messageForm } from './message-form.js';
import { type AnswerFormState, EMPTY_ANSWER_FORM, questionsSection } from './questions.js';
import { resultTable } from './result-table.js';

/** The status page of a task, and its markdown twin. Every field an agent wrote is escaped. */

/** What the service's own receipt check found (services/tasks/receipt-check.ts), for the box on the page. */
export interface ReceiptVerdict {
  valid: boolean;
  signed_at: string | null;
}

const STATUS_TEXT: Record<string, string> = {
  submitted: 'Waiting for review',
  under_review: 'Under review',
  in_progress: 'In progress',
  accepted: 'Accepted — being worked on',
  delivered: 'Delivered',
  rejected: 'Declined',
};

function title(deps: ServiceDeps, taskType: string): string {
  return deps.catalog.find((s) => s.task_type === taskType)?.title ?? taskType;
}

function steps(task: PublicTask): SafeHtml {
  const reached = new Set(task.status_history.map((h) => h.status));
  const at = (status: string) => task.status_history.find((h) => h.status === status)?.at;
  const rejected = task.status === 'rejected';
  const step = (status: string, label: string, done: boolean, bad = false) =>
    html`<li class="${bad ? 'bad' : done ? 'done' : ''}"${done ? html` aria-current="${task.status === status ? 'step' : 'false'}"` : ''}><b>${label}</b>${done ? timeHtml(at(status)) : 'not yet'}</li>`;
  return html`<ol class="steps" aria-label="Progress">
${step('submitted', 'Submitted', true)}
${step('accepted', 'Accepted', reached.has('accepted'))}
${rejected ? step('rejected', 'Declined', true, true) : step('delivered', 'Delivered', reached.has('delivered'))}
</ol>`;
}

function notesHeading(task: PublicTask): string {
  if (task.status === 'delivered') return 'The result';
  if (task.status === 'rejected') return 'Why it was declined';
  return 'Notes from the operator';
}

/** How the history names a status: in words (the JSON and the Markdown view keep the API's values). */
function statusLabel(status: string): string {
  return STATUS_LABELS[status as TaskStatus] ?? status;
}

/** A receipt issued elsewhere (an imported task): who issued it, or null when it is this deployment's. */
function foreignIssuer(deps: ServiceDeps, receipt: string): string | null {
  const iss = receiptIssuer(receipt);
  return sameIssuer(iss, deps.config.baseUrl) ? null : (iss ?? 'an unknown issuer');
}

/** Images the service previews (a thumbnail was made at upload). */
const PREVIEWED = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif']);

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Delivered files: images as thumbnails, everything as a download link with its hash. */
function filesSection(task: PublicTask): SafeHtml {
  const files = task.attachments ?? [];
  if (files.length === 0) return html``;
  return html`<section class="card" aria-labelledby="files-heading">
<h2 id="files-heading" class="flush-top">Files (${files.length})</h2>
<ul class="files">${files.map((f) => {
    const path = attachmentPath(task.task_id, f.attachment_id);
    return html`<li>${PREVIEWED.has(f.media_type) ? html`<a href="${path}" aria-hidden="true" tabindex="-1"><img src="${path}/thumbnail" alt="" loading="lazy" width="96" height="96"></a>` : ''}<div class="meta"><a class="file" href="${path}" download>${f.name}</a><span class="muted small">${f.media_type}, ${formatSize(f.size)}</span></div></li>`;
  })}</ul>
<p class="small muted">Every file is covered by the signed receipt below.</p>
<details class="tech"><summary>Technical details</summary>
<p class="small">The SHA-256 of each file, as signed in the receipt:</p>
<ul class="clean hashes">${files.map((f) => html`<li><span class="small">${f.name}</span><code class="hash">sha256 ${f.sha256}</code></li>`)}</ul>
<p class="small">After downloading, compare with <code>sha256sum</code> (or <code>shasum -a 256</code>), or run <code>npm run verify-receipt -- ${task.task_id} --files &lt;folder&gt;</code> with this service’s code.</p>
</details>
</section>`;
}

/**
 * The receipt as a person reads it: a box that says whether it checks out, in one sentence, and
 * everything a verifier needs (hashes, the JWS, the steps, the commands) behind "Technical
 * details". The box is the service's own check (receipt-check.ts); the pages' script checks again
 * in the browser against the published keys and says so.
 */
function receiptSection(deps: ServiceDeps, task: PublicTask, check: ReceiptVerdict | undefined): SafeHtml {
  if (!task.receipt) return html``;
  const base = deps.config.baseUrl;
  const foreign = foreignIssuer(deps, task.receipt);
  if (foreign !== null) return carriedOverReceipt(task, foreign);
  const signedAt = check?.signed_at ?? task.receipt_issued_at;
  const box =
    check?.valid === false
      ? html`<div class="alert receipt-check failed" role="status" data-receipt-check data-task-id="${task.task_id}" data-iss="${base}"><p class="flush-top" data-receipt-result><strong>This receipt does not check out.</strong> Do not rely on this result; write to the operator below.</p></div>`
      : html`<div class="alert receipt-check verified" role="status" data-receipt-check data-task-id="${task.task_id}" data-iss="${base}"><p class="flush-top" data-receipt-result><strong>Verified.</strong> Signed by this service on ${timeHtml(signedAt)}; the result above is exactly what was signed.</p></div>`;
  return html`<section class="card" aria-labelledby="receipt-heading">
<h2 id="receipt-heading" class="flush-top">Signed receipt</h2>
${box}
<p class="small muted">The receipt proves what was asked, when, and what was delivered. Anyone can check it, without this page.</p>
<details class="tech"><summary>Technical details</summary>
<dl class="facts">
<dt>Issued</dt><dd>${timeHtml(task.receipt_issued_at)}</dd>
<dt>SHA-256 of the result</dt><dd><code class="hash">${task.deliverable_sha256 ?? ''}</code></dd>
<dt>Issuer (<code>iss</code>)</dt><dd><code>${base}</code></dd>
</dl>
<h3>The receipt (compact JWS)</h3>
<pre class="receipt" tabindex="0" aria-label="The receipt"><code>${task.receipt}</code></pre>
<h3>How to verify it</h3>
<ol>
<li>Fetch <a href="/.well-known/jwks.json">the published keys</a> (<code>/.well-known/jwks.json</code> on this service).</li>
<li>Verify the receipt as a JWS with algorithm EdDSA (Ed25519), using the key whose <code>kid</code> matches the receipt’s header.</li>
<li>Check that its <code>task_id</code> and <code>sub</code> are this task’s id and its <code>iss</code> is the issuer above.</li>
<li>Compute SHA-256 over the UTF-8 bytes of <code>operator_notes</code> exactly as <a href="/api/${API_VERSION}/tasks/${task.task_id}">the status endpoint</a> returns it, and compare with <code>deliverable_sha256</code> in the receipt.</li>
</ol>
<p class="small">With this service’s code: <code>npm run verify-receipt -- ${task.task_id}</code>.</p>
</details>
</section>`;
}

/**
 * A receipt imported from another deployment: this service holds none of its keys and has checked
 * nothing, so it says neither "signed" nor "verified" — only that the receipt was carried over and
 * who claims to have issued it (the `iss` as given, unverified), and how to check it there.
 */
function carriedOverReceipt(task: PublicTask, issuer: string): SafeHtml {
  return html`<section class="card" aria-labelledby="receipt-heading">
<h2 id="receipt-heading" class="flush-top">Receipt (carried over)</h2>
<div class="alert receipt-check" role="status"><p class="flush-top"><strong>Carried over, not verified here.</strong> This task was imported from another deployment; its receipt names <code>${issuer}</code> as its issuer. This service has not checked it: check it against that deployment’s published keys.</p></div>
<details class="tech"><summary>Technical details</summary>
<dl class="facts">
<dt>Issued (as imported)</dt><dd>${timeHtml(task.receipt_issued_at)}</dd>
<dt>SHA-256 of the result (as imported)</dt><dd><code class="hash">${task.deliverable_sha256 ?? ''}</code></dd>
<dt>Issuer named in the receipt (<code>iss</code>, not verified)</dt><dd><code>${issuer}</code></dd>
</dl>
<h3>The receipt (compact JWS)</h3>
<pre class="receipt" tabindex="0" aria-label="The receipt"><code>${task.receipt}</code></pre>
</details>
</section>`;
}

function nextStep(deps: ServiceDeps, task: PublicTask): SafeHtml | string {
  switch (task.status) {
    case 'submitted':
      return `Received. A human reviews it and accepts it with an estimate or declines it with a reason, usually within ${deps.profile.response_target_hours} hours. Keep this page’s address: the task id in it is the only key to the task.`;
    case 'accepted':
      return task.eta ? html`Accepted. The operator expects to deliver by ${timeHtml(task.eta)}.` : 'Accepted. The operator is working on it.';
    case 'delivered':
      return 'Delivered. The result and its signed receipt are below.';
    case 'rejected':
      return 'The operator declined this task. The reason, when given, is below.';
    case 'under_review':
    case 'in_progress':
      // Only tasks carried over from an earlier deployment have these (docs/import.md).
      return `${STATUS_LABELS[task.status]} (a status from before this service). The operator will accept it with an estimate or decline it with a reason.`;
    default:
      return '';
  }
}

export function statusBody(
  deps: ServiceDeps,
  task: PublicTask,
  message: MessageFormState = EMPTY_MESSAGE_FORM,
  answer: AnswerFormState = EMPTY_ANSWER_FORM,
  receipt?: ReceiptVerdict,
): SafeHtml {
  const api = `/api/${API_VERSION}/tasks/${task.task_id}`;
  return html`<p class="muted small">Task <code>${task.task_id}</code></p>
<h1>${title(deps, task.task_type)} <span class="badge ${task.status}">${STATUS_TEXT[task.status] ?? task.status}</span></h1>
${steps(task)}
<p class="next">${nextStep(deps, task)}</p>
${task.awaiting_answer ? html`<div class="alert" role="status"><a href="#questions">The operator has a question for you</a>: the work waits for your answer.</div>` : ''}
${questionsSection(task, answer)}
${
  task.result !== null
    ? html`<section class="card" aria-labelledby="notes-heading"><h2 id="notes-heading" class="flush-top">${notesHeading(task)}</h2><div class="table-wrap">${resultTable(task.result, task.response_schema)}</div></section>`
    : task.operator_notes !== null && task.operator_notes !== ''
      ? html`<section class="card" aria-labelledby="notes-heading"><h2 id="notes-heading" class="flush-top">${notesHeading(task)}</h2><p class="text">${task.operator_notes}</p></section>`
      : ''
}
<section class="card" aria-labelledby="details-heading">
<h2 id="details-heading" class="flush-top">The task</h2>
<p class="text">${task.description}</p>
<dl class="facts">
<dt>Status</dt><dd>${STATUS_TEXT[task.status] ?? task.status}</dd>
<dt>Submitted</dt><dd>${timeHtml(task.created_at)}</dd>
<dt>First seen by the operator</dt><dd>${task.seen_by_operator_at ? timeHtml(task.seen_by_operator_at) : 'not yet'}</dd>
${task.approvals ? html`<dt>Approvals</dt><dd>${task.approvals.given} of ${task.approvals.required} approvals (operators who must agree before delivery)</dd>` : ''}
${
  // A final task will not be delivered later: its estimate is history, not a promise.
  isFinal(task.status as TaskStatus)
    ? ''
    : html`<dt>Estimated delivery</dt><dd>${task.eta ? timeHtml(task.eta) : task.status === 'submitted' ? 'given on acceptance' : '—'}</dd>`
}
<dt>Deadline</dt><dd>${task.deadline ? timeHtml(task.deadline) : 'none'}</dd>
<dt>Location</dt><dd>${task.location_required ? (task.location_detail ?? 'in person, place not given') : (task.location_detail ?? 'remote')}</dd>
<dt>Result format</dt><dd>${outputFormatLabel(task.output_format)}</dd>
${task.requester ? html`<dt>Requested by</dt><dd>${task.requester}</dd>` : ''}
<dt>Submitted through</dt><dd>${task.source === 'web_form' ? 'the web form' : 'the API'}</dd>
<dt>Last change</dt><dd>${timeHtml(task.updated_at)}</dd>
</dl>
</section>
${filesSection(task)}
${receiptSection(deps, task, receipt)}
<section aria-labelledby="history-heading">
<h2 id="history-heading">History</h2>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Status</th><th scope="col">When</th></tr></thead>
<tbody>${task.status_history.map((h) => html`<tr><td>${statusLabel(h.status)}</td><td>${timeHtml(h.at)}</td></tr>`)}</tbody></table></div>
</section>
${messageForm(deps, task, message)}
<p class="small muted">This page does not refresh itself; reload it to see changes.</p>
<details class="tech"><summary>Technical details</summary>
<p class="small">For programs: this task as JSON at <a href="${api}">${api}</a>; messages through <code>POST /api/${API_VERSION}/messages</code> naming the task id <code>${task.task_id}</code>.</p>
</details>`;
}

/** Without an id: a form to look one up. */
export function lookupBody(message?: string): SafeHtml {
  return html`<h1>Check a task</h1>
${message ? html`<div class="alert bad" role="alert">${message}</div>` : ''}
<form method="get" action="/tasks" class="card">
<div class="field"><label for="f-id">Task id</label><span class="hint" id="h-id">It looks like task-2030-…; it was shown when the task was submitted.</span>
<input type="search" id="f-id" name="id" autocomplete="off" spellcheck="false" aria-describedby="h-id"></div>
<button type="submit">Show the task</button>
</form>`;
}

export function notFoundBody(id: string): SafeHtml {
  return html`<h1>No task with that id</h1>
<p>There is no task <code>${id.slice(0, 120)}</code>. Check that the whole id was copied, from <code>task-</code> to the end.</p>
${lookupBody()}`;
}

/** Agent text goes in fenced blocks so it stays text in any markdown renderer. */
export function statusMarkdown(deps: ServiceDeps, task: PublicTask): string {
  const base = deps.config.baseUrl;
  const blocks: Block[] = [
    { h: 1, text: `Task ${task.task_id}` },
    {
      list: [
        `Status: **${task.status}** (${STATUS_TEXT[task.status] ?? task.status})`,
        `Type: \`${task.task_type}\``,
        `Submitted: ${task.created_at}`,
        `Seen by the operator: ${task.seen_by_operator_at ?? 'not yet'}`,
        `ETA: ${task.eta ?? 'none yet'}`,
        `Deadline: ${task.deadline ?? 'none'}`,
        `JSON: ${base}/api/${API_VERSION}/tasks/${task.task_id}`,
      ],
    },
    { h: 2, text: 'Description' },
    { code: task.description },
  ];
  if (task.operator_notes) blocks.push({ h: 2, text: notesHeading(task) }, { code: task.operator_notes });
  if (task.questions.length > 0) {
    blocks.push({ h: 2, text: `Questions from the operator${task.awaiting_answer ? ' (awaiting your answer)' : ''}` });
    for (const q of task.questions) {
      blocks.push({ p: `${q.question_id}, asked ${q.asked_at}:` }, { code: q.question });
      blocks.push(
        q.answer !== null
          ? { code: q.answer }
          : { p: `Not answered yet: POST {"answer": "..."} to ${base}/api/${API_VERSION}/tasks/${task.task_id}/questions/${q.question_id}/answer` },
      );
    }
  }
  if (task.attachments && task.attachments.length > 0) {
    blocks.push(
      { h: 2, text: 'Files' },
      {
        table: {
          head: ['name', 'media_type', 'size', 'sha256', 'url'],
          rows: task.attachments.map((f) => [f.name, f.media_type, String(f.size), f.sha256, f.url]),
        },
      },
    );
  }
  blocks.push({ h: 2, text: 'History' }, { table: { head: ['status', 'at'], rows: task.status_history.map((h) => [h.status, h.at]) } });
  if (task.receipt) {
    const foreign = foreignIssuer(deps, task.receipt);
    blocks.push(
      { h: 2, text: 'Receipt' },
      ...(foreign !== null ? [{ p: `Issued by another deployment (${foreign}), not by this service: the task was carried over from there.` }] : []),
      {
        p: `deliverable_sha256: \`${task.deliverable_sha256 ?? ''}\`; issued ${task.receipt_issued_at ?? ''}. Verify the JWS (EdDSA) against ${base}/.well-known/jwks.json and compare deliverable_sha256 with SHA-256 of operator_notes.`,
      },
      { code: task.receipt },
    );
  }
  return toMarkdown(blocks);
}

export function notFoundMarkdown(deps: ServiceDeps, id: string): string {
  return toMarkdown([
    { h: 1, text: '404 task_not_found' },
    { p: 'No task has that id. Check the task_id returned at submission.' },
    { code: id.slice(0, 120) },
    { p: `Look tasks up at ${deps.config.baseUrl}/api/${API_VERSION}/tasks/{task_id}.` },
  ]);
}
