import { html, type SafeHtml } from '../../../domain/html.js';
import { deliverableSha256 } from '../../../receipts/payload.js';
import { resultTable } from '../../pages/result-table.js';
import { PASSKEY_SCRIPTS } from '../auth/passkey-assets.js';
import type { Session } from '../auth/session.js';
import { csrfField } from '../layout.js';

/**
 * The delivery's confirmation step: the SHA-256 the receipt will sign, computed by the server over
 * exactly the text that will be delivered, so the hash is right without any script. Confirming
 * posts the same text again with `confirmed=1`.
 */
/** The hash the receipt will sign, one tap away (docs/inbox.md: hashes behind "Technical details"). */
function technical(hash: string): SafeHtml {
  return html`<details class="tech"><summary>Technical details</summary><p class="sub">The receipt signs this SHA-256 (of the canonical JSON, for an answer):</p><p class="hash mono" id="confirm-hash">${hash}</p></details>`;
}

/**
 * `sign`: a proposal of a task needing several approvals, by an operator signed in with a passkey
 * (docs/approvals.md): confirming asks the device to sign the approval challenge first (passkey.js).
 */
export function deliverConfirmView(taskId: string, notes: string, session: Session, sign?: { challenge: string; credential: string }): SafeHtml {
  return html`<div><a class="back" href="/operator/tasks/${taskId}">← Back to the task</a></div>
    <section class="card" aria-labelledby="confirm-heading">
      <h1 id="confirm-heading">${sign ? 'Propose and sign with your passkey?' : 'Deliver and sign the receipt?'}</h1>
      <p>${sign ? 'Other operators approve this deliverable before it is delivered; your passkey signs it as your approval.' : 'The result below is frozen once delivered, and the receipt signs it.'}</p>
      <p id="passkey-status" class="flash error" role="alert" hidden></p>
      <p class="prose quote">${notes}</p>
      ${technical(deliverableSha256(notes))}
      <form class="action" method="post" action="/operator/tasks/${taskId}/deliver" ${sign ? html`data-approve-challenge="${sign.challenge}" data-approve-credential="${sign.credential}"` : ''}>
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="1">
        ${sign ? html`<input type="hidden" name="assertion" value="">` : ''}
        <textarea name="operator_notes" hidden aria-hidden="true" tabindex="-1">
${notes}</textarea>
        <div class="row end">
          ${sign ? '' : html`<button class="btn secondary" type="submit" formaction="/operator/tasks/${taskId}/notes">Save as draft and edit</button>`}
          <button class="btn" type="submit">${sign ? 'Sign and propose' : html`Confirm: deliver &amp; sign receipt`}</button>
        </div>
      </form>
    </section>
    ${sign ? PASSKEY_SCRIPTS : ''}`;
}

/**
 * The same step for a structured answer: the result as a table, and the SHA-256 of its canonical
 * JSON (the deliverable the receipt signs). Confirming posts that canonical JSON again.
 */
export function deliverResultConfirmView(
  taskId: string,
  canonical: string,
  schema: unknown,
  session: Session,
  sign?: { challenge: string; credential: string },
): SafeHtml {
  return html`<div><a class="back" href="/operator/tasks/${taskId}">← Back to the task</a></div>
    <section class="card" aria-labelledby="confirm-heading">
      <h1 id="confirm-heading">${sign ? 'Propose and sign with your passkey?' : 'Deliver and sign the receipt?'}</h1>
      <p>${sign ? 'Other operators approve this answer before it is delivered; your passkey signs it as your approval.' : 'The answer below is frozen once delivered, and the receipt signs it.'}</p>
      <p id="passkey-status" class="flash error" role="alert" hidden></p>
      ${resultTable(JSON.parse(canonical), schema)}
      ${technical(deliverableSha256(canonical))}
      <form class="action" method="post" action="/operator/tasks/${taskId}/result" ${sign ? html`data-approve-challenge="${sign.challenge}" data-approve-credential="${sign.credential}"` : ''}>
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="1">
        ${sign ? html`<input type="hidden" name="assertion" value=""><input type="hidden" name="result_source" value="json">` : ''}
        <textarea name="result_json" hidden aria-hidden="true" tabindex="-1">${canonical}</textarea>
        <div class="row end">
          <button class="btn" type="submit" name="result_source" value="json">${sign ? 'Sign and propose' : html`Confirm: deliver &amp; sign receipt`}</button>
        </div>
      </form>
    </section>
    ${sign ? PASSKEY_SCRIPTS : ''}`;
}
