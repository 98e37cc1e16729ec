import { html, type SafeHtml } from '../../../domain/html.js';
import type { WaitingApproval } from '../../../services/console/approvals.js';
import { PASSKEY_SCRIPTS } from '../auth/passkey-assets.js';
import type { Session } from '../auth/session.js';
import { csrfField, taskTitle, when } from '../layout.js';

/**
 * The console's "Approve" view (docs/approvals.md), phone first: each deliverable waiting for
 * approvals, who proposed it and who approved it, with "Approve" and "Send back". Signed in with a
 * passkey, "Approve" asks the device to sign the approval challenge (passkey.js); signed in with a
 * key, the approval is unsigned, and the page says so.
 */
export interface ApproveViewOptions {
  session: Session;
  now: Date;
  waiting: WaitingApproval[];
  /** Enabled operators (the owner aside). */
  operators: number;
  /** Operators' names by id, to say who proposed and approved. */
  names: Map<string, string>;
  notice?: SafeHtml | undefined;
}

function signing(session: Session): SafeHtml {
  return session.credential.kind === 'passkey'
    ? html`<p class="sub" id="signing">You signed in with a passkey: each approval is signed by it (your device asks).</p>`
    : html`<div class="flash error" role="note" id="signing"><strong>Unsigned:</strong> you signed in with a key, not a passkey, so your approvals carry no passkey signature.<details class="tech"><summary>Technical details</summary><p class="sub">The receipt lists your approvals with <code>attestation: null</code>. Sign in with your passkey to sign them.</p></details></div>`;
}

function card(options: ApproveViewOptions, item: WaitingApproval): SafeHtml {
  const { session, now } = options;
  const task = item.task;
  const proposal = task.proposal;
  const approvals = task.approvals;
  if (!proposal || !approvals) return html``;
  const id = task.task_id;
  const passkey = session.credential.kind === 'passkey' ? session.credential.id : undefined;
  const who = (id: string) => options.names.get(id) ?? (id === 'owner' ? 'the owner' : id);
  return html`<section class="card" aria-labelledby="t-${id}" data-task="${id}">
    <h2 id="t-${id}"><a href="/operator/tasks/${id}">${taskTitle(task)}</a></h2>
    <p><strong>${approvals.given} of ${approvals.required} approvals</strong> <span class="sub">· proposed by ${who(proposal.proposed_by)}, ${when(proposal.proposed_at, now)}</span></p>
    ${approvals.required > options.operators ? html`<p class="flash error" role="note">More approvals required (${approvals.required}) than operators exist (${options.operators}): invite more, or it can never be delivered.</p>` : ''}
    <p class="prose quote">${proposal.operator_notes}</p>
    <ul class="sub">${proposal.approvals.map((a) => html`<li>${who(a.approver)}, ${when(a.at, now)}${a.signed ? ' · signed by passkey' : ' · unsigned'}</li>`)}</ul>
    <details class="tech"><summary>Technical details</summary><p class="sub">SHA-256 of the deliverable: <span class="mono">${proposal.deliverable_sha256}</span></p></details>
    ${
      item.mine
        ? html`<form method="post" action="/operator/approve/${id}" class="row" ${passkey ? html`data-approve-challenge="${proposal.challenge}" data-approve-credential="${passkey}"` : ''}>${csrfField(session)}
        <input type="hidden" name="decision" value="approve"><input type="hidden" name="assertion" value="">
        <button class="btn" type="submit">Approve</button></form>
      <form method="post" action="/operator/approve/${id}">${csrfField(session)}
        <input type="hidden" name="decision" value="send_back">
        <div class="field"><label for="why-${id}">Reason to send it back</label><textarea id="why-${id}" name="reason" maxlength="2000" rows="2" required></textarea></div>
        <button class="btn secondary" type="submit">Send back</button></form>`
        : html`<p class="sub">You proposed or approved it already: another operator decides.</p>`
    }
  </section>`;
}

export function approveView(options: ApproveViewOptions): SafeHtml {
  return html`<h1>Approve</h1>
    ${options.notice ?? ''}
    <p id="passkey-status" class="flash error" role="alert" hidden></p>
    ${signing(options.session)}
    ${options.waiting.length === 0 ? html`<p class="sub">Nothing waits for approval.</p>` : options.waiting.map((item) => card(options, item))}
    ${PASSKEY_SCRIPTS}`;
}
