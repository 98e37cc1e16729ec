import { html, type SafeHtml } from '../../../domain/html.js';
import type { Coverage, CoverageTime } from '../../../domain/tasks/coverage.js';
import { duration, humanType } from '../layout.js';

/**
 * Where the service level goes on the queue page: an empty place holding a link to its page, filled
 * by the console's script from that page when it comes into view (the phone's "More" sheet when
 * opened, beside the queue on a wide screen at load), so reading coverage is never part of
 * rendering the queue (docs/coverage.md, For operators).
 */
export function serviceLevelSlot(where: 'sheet' | 'aside'): SafeHtml {
  return html`<div class="service-level-slot${where === 'aside' ? ' wide-only' : ''}" data-service-level="${where}">
    <a href="/operator/service-level">Service level, last 30 days</a>
  </div>`;
}

/**
 * The operators' own service level (its page, /operator/service-level, whose section fills the
 * queue's places for it): the same figures agents read at GET /api/v1/coverage
 * (services/tasks/coverage.ts), so the team sees what it is promising. Types with nothing measured
 * in the window are left out.
 */
export function serviceLevelView(coverage: Coverage): SafeHtml {
  const measured = coverage.by_type.filter((t) => t.delivered_30d > 0 || t.acceptance_rate_30d !== null || t.time_to_seen !== null);
  const p50 = (time: CoverageTime) => (time === null ? '—' : duration(time.p50_seconds));
  return html`<section class="service-level" aria-labelledby="service-level-title">
    <h2 id="service-level-title">Service level, last 30 days</h2>
    <p class="sub">${coverage.accepting ? 'Taking tasks' : 'Not taking tasks (daily cap reached)'} · ${
      coverage.operators_on_duty === null ? 'no team' : `${coverage.operators_on_duty} on duty`
    } · ${coverage.open_tasks} open</p>
    ${
      measured.length === 0
        ? html`<p class="sub">Nothing measured yet.</p>`
        : html`<dl>${measured.map(
            (t) =>
              html`<dt>${humanType(t.task_type)}</dt><dd>Seen ${p50(t.time_to_seen)} · accepted ${p50(t.time_to_accept)} · delivered ${p50(
                t.time_to_deliver,
              )}<br>${t.acceptance_rate_30d === null ? '—' : `${Math.round(t.acceptance_rate_30d * 100)} %`} taken · ${t.delivered_30d} delivered</dd>`,
          )}</dl>
          <p class="sub">Medians from submission; agents see the same at /api/v1/coverage.</p>`
    }
  </section>`;
}
