import { html, type SafeHtml } from '../../../domain/html.js';
import { deliverableSha256 } from '../../../receipts/payload.js';
import { resultTable } from '../../pages/result-table.js';
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

export function deliverConfirmView(taskId: string, notes: string, session: Session): SafeHtml {
  return html`<div><a class="back" href="/operator/tasks/${taskId}">← Back to the task</a></div>
    <section class="card" aria-labelledby="confirm-heading">
      <h1 id="confirm-heading">Deliver and sign the receipt?</h1>
      <p>The result below is frozen once delivered, and the receipt signs it.</p>
      <p class="prose quote">${notes}</p>
      ${technical(deliverableSha256(notes))}
      <form class="action" method="post" action="/operator/tasks/${taskId}/deliver">
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="1">
        <textarea name="operator_notes" hidden aria-hidden="true" tabindex="-1">
${notes}</textarea>
        <div class="row end">
          <button class="btn secondary" type="submit" formaction="/operator/tasks/${taskId}/notes">Save as draft and edit</button>
          <button class="btn" type="submit">Confirm: deliver &amp; sign receipt</button>
        </div>
      </form>
    </section>`;
}

/**
 * The same step for a structured answer: the result as a table, and the SHA-256 of its canonical
 * JSON (the deliverable the receipt signs). Confirming posts that canonical JSON again.
 */
export function deliverResultConfirmView(taskId: string, canonical: string, schema: unknown, session: Session): SafeHtml {
  return html`<div><a class="back" href="/operator/tasks/${taskId}">← Back to the task</a></div>
    <section class="card" aria-labelledby="confirm-heading">
      <h1 id="confirm-heading">Deliver and sign the receipt?</h1>
      <p>The answer below is frozen once delivered, and the receipt signs it.</p>
      ${resultTable(JSON.parse(canonical), schema)}
      ${technical(deliverableSha256(canonical))}
      <form class="action" method="post" action="/operator/tasks/${taskId}/result">
        ${csrfField(session)}
        <input type="hidden" name="confirmed" value="1">
        <textarea name="result_json" hidden aria-hidden="true" tabindex="-1">${canonical}</textarea>
        <div class="row end">
          <button class="btn" type="submit" name="result_source" value="json">Confirm: deliver &amp; sign receipt</button>
        </div>
      </form>
    </section>`;
}
