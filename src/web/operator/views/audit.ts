import { html, type SafeHtml } from '../../../domain/html.js';
import type { AuditEntry } from '../../../domain/team-schemas.js';
import { when } from '../layout.js';

/** Who did what, when, on one task (the audit log's entries for it, newest first). */
export function auditView(entries: readonly AuditEntry[], names: ReadonlyMap<string, string>, now: Date): SafeHtml {
  const body =
    entries.length === 0
      ? html`<p class="sub">Nothing recorded yet.</p>`
      : html`<ol class="timeline">${entries.map(
          (entry) =>
            html`<li data-audit="${entry.action}"><strong>${names.get(entry.actor) ?? entry.actor}</strong> <span class="mono">${entry.action}</span> <span class="sub">${when(entry.at, now)}</span></li>`,
        )}</ol>`;
  return html`<section class="card" aria-labelledby="aud"><h2 id="aud">Who did what</h2>${body}</section>`;
}
