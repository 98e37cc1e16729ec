import { html, type SafeHtml } from '../../../domain/html.js';
import type { AdminStats } from '../../../domain/tasks/admin-schemas.js';
import type { BlockPage } from '../../../services/console/blocklist.js';
import { BLOCK_KINDS } from '../../../services/console/blocklist.js';
import type { OutboxEntry, OutboxStatus } from '../../../services/delivery/outbox-admin.js';
import { PASSKEY_SCRIPTS } from '../auth/passkey-assets.js';
import type { Session } from '../auth/session.js';
import { csrfField, duration, relative, statusPill, when } from '../layout.js';

/** The console's secondary pages: messages, blocklist, outbox, stats. */

export interface BlocklistForm {
  kind?: string;
  value?: string;
  reason?: string;
}

export function blocklistView(page: BlockPage, session: Session, now: Date, form: BlocklistForm = {}, notice?: SafeHtml): SafeHtml {
  const entries = page.blocklist;
  const next = page.next_cursor === null ? null : `/operator/blocklist?cursor=${encodeURIComponent(page.next_cursor)}`;
  return html`<div class="page-head"><div><h1>Blocklist</h1><p class="sub">Blocked clients get 403 client_blocked on submissions and messages. Automatic blocks (repeated limit abuse) appear here too.</p></div></div>
    ${notice ?? ''}
    <div class="grid-2">
      <section class="card" aria-labelledby="list">
        <h2 id="list">Active entries</h2>
        ${
          entries.length === 0
            ? html`<p class="sub">Nobody is blocked.</p>`
            : html`<div class="table-wrap"><table class="stack">
              <thead><tr><th>Kind</th><th>Value</th><th>Reason</th><th>Expires</th><th><span class="sub">Action</span></th></tr></thead>
              <tbody>${entries.map(
                (e) => html`<tr>
                  <td data-label="Kind"><span class="badge">${e.kind}</span> ${e.source === 'auto' ? html`<span class="badge warn">auto</span>` : ''}</td>
                  <td data-label="Value" class="mono">${e.value}</td>
                  <td data-label="Reason">${e.reason ?? ''}</td>
                  <td data-label="Expires">${e.expires_at ? relative(e.expires_at, now) : 'never'}</td>
                  <td data-label="Action"><form method="post" action="/operator/blocklist/${e.id}/remove">${csrfField(session)}<button class="btn small secondary" type="submit">Remove</button></form></td>
                </tr>`,
              )}</tbody></table></div>`
        }
        ${next ? html`<div class="pager"><a class="btn secondary" href="${next}">Older entries →</a></div>` : ''}
      </section>
      <section class="card" aria-labelledby="add">
        <h2 id="add">Block</h2>
        <form method="post" action="/operator/blocklist">
          ${csrfField(session)}
          <div class="field"><label for="kind">Kind</label>
            <select id="kind" name="kind">${BLOCK_KINDS.map((k) => html`<option value="${k}" ${form.kind === k ? html`selected` : ''}>${k}</option>`)}</select></div>
          <div class="field"><label for="value">Value <span class="hint">— an IP address, an e-mail, a domain, or a requester name</span></label>
            <input id="value" name="value" type="text" required maxlength="320" value="${form.value ?? ''}"></div>
          <div class="field"><label for="block-reason">Reason <span class="hint">(optional)</span></label>
            <input id="block-reason" name="reason" type="text" maxlength="500" value="${form.reason ?? ''}"></div>
          <div class="field"><label for="expires">Expires <span class="hint">(optional, <span data-tz>UTC</span>)</span></label>
            <input id="expires" name="expires_local" type="datetime-local" data-eta><input type="hidden" name="eta_offset" value="0"></div>
          <button class="btn" type="submit">Add to blocklist</button>
        </form>
      </section>
    </div>`;
}

const OUTBOX_TABS: [string, string][] = [
  ['all', 'All'],
  ['pending', 'Pending'],
  ['failed', 'Failed'],
  ['sent', 'Sent'],
];

export function outboxView(
  entries: OutboxEntry[],
  counts: Record<OutboxStatus, number>,
  filter: string,
  session: Session,
  now: Date,
  notice?: SafeHtml,
): SafeHtml {
  const total = counts.pending + counts.sent + counts.failed;
  return html`<div class="page-head"><div><h1>Outbox</h1><p class="sub">Every mail the service sends, newest first. Failed mails can be queued again.</p></div></div>
    ${notice ?? ''}
    <nav class="tabs" aria-label="Filter by status">${OUTBOX_TABS.map(
      ([key, label]) =>
        html`<a href="/operator/outbox?status=${key}" ${filter === key ? html`aria-current="page"` : ''}>${label}<span class="n">${key === 'all' ? total : counts[key as OutboxStatus]}</span></a>`,
    )}</nav>
    ${
      entries.length === 0
        ? html`<div class="card empty">No mail here.</div>`
        : html`<div class="card table-wrap"><table class="stack">
          <thead><tr><th>Created</th><th>Kind</th><th>To</th><th>Subject</th><th>Status</th><th>Attempts</th><th><span class="sub">Action</span></th></tr></thead>
          <tbody>${entries.map(
            (e) => html`<tr>
              <td data-label="Created"><time datetime="${e.created_at}" title="${e.created_at}">${relative(e.created_at, now)}</time></td>
              <td data-label="Kind">${e.kind.replace(/_/g, ' ')}${e.task_id ? html` · <a href="/operator/tasks/${e.task_id}">task</a>` : ''}</td>
              <td data-label="To" class="mono">${e.recipient}</td>
              <td data-label="Subject">${e.subject}</td>
              <td data-label="Status"><span class="badge ${e.status === 'failed' ? 'danger' : e.status === 'pending' ? 'warn' : ''}">${e.status}</span>${
                e.last_error ? html`<div class="sub">${e.last_error}</div>` : ''
              }${e.status === 'pending' ? html`<div class="sub">next try ${relative(e.next_attempt_at, now)}</div>` : ''}</td>
              <td data-label="Attempts">${e.attempts}</td>
              <td data-label="Action">${
                e.status === 'failed'
                  ? html`<form method="post" action="/operator/outbox/${e.id}/retry">${csrfField(session)}<button class="btn small secondary" type="submit">Retry</button></form>`
                  : ''
              }</td>
            </tr>`,
          )}</tbody></table></div>`
    }`;
}

function capMeter(label: string, use: { used: number; cap: number; remaining: number }): SafeHtml {
  return html`<div class="field"><div class="row"><strong>${label}</strong><span class="sub">${use.used} of ${use.cap} used · ${use.remaining} left</span></div>
    <meter min="0" max="${Math.max(use.cap, 1)}" low="${Math.floor(use.cap * 0.7)}" high="${Math.floor(use.cap * 0.9)}" optimum="0" value="${use.used}">${use.used}/${use.cap}</meter></div>`;
}

export function statsView(stats: AdminStats, now: Date): SafeHtml {
  const counts = stats.counts_by_status;
  return html`<div class="page-head"><div><h1>Stats</h1><p class="sub">Tasks created in the last ${stats.window_days} days.</p></div>
      <nav class="tabs" aria-label="Window">${[7, 30, 90].map((d) => html`<a href="/operator/stats?days=${d}" ${stats.window_days === d ? html`aria-current="page"` : ''}>${d} days</a>`)}</nav>
    </div>
    <div class="stats">
      <div class="stat"><div class="label">Open queue</div><div class="value">${stats.open_queue}</div><div class="sub">submitted + accepted</div></div>
      <div class="stat"><div class="label">Time to first view (median)</div><div class="value">${duration(stats.time_to_first_view_seconds.median)}</div><div class="sub">p90 ${duration(stats.time_to_first_view_seconds.p90)} · ${stats.time_to_first_view_seconds.samples} tasks</div></div>
      <div class="stat"><div class="label">Time to acceptance (median)</div><div class="value">${duration(stats.time_to_acceptance_seconds.median)}</div><div class="sub">p90 ${duration(stats.time_to_acceptance_seconds.p90)} · ${stats.time_to_acceptance_seconds.samples} tasks</div></div>
    </div>
    <div class="grid-2">
      <section class="card" aria-labelledby="by-status"><h2 id="by-status">By status</h2>
        <table><tbody>${['submitted', 'accepted', 'delivered', 'rejected'].map((s) => html`<tr><td>${statusPill(s)}</td><td>${counts[s] ?? 0}</td></tr>`)}</tbody></table>
      </section>
      <section class="card" aria-labelledby="caps"><h2 id="caps">Today’s daily caps</h2>
        ${capMeter('Tasks', stats.daily_caps.tasks)}
        ${capMeter('E-mails', stats.daily_caps.emails)}
        <p class="sub">Resets ${when(stats.daily_caps.resets_at, now)}</p>
      </section>
    </div>
    ${retentionCard(stats.retention, now)}`;
}

/** The last retention run (services/runtime/retention.ts), so the operator sees that data is being erased. */
function retentionCard(run: AdminStats['retention'], now: Date): SafeHtml {
  const body = run
    ? html`<p>Last run ${when(run.ran_at, now)}: ${run.erased_tasks} tasks and ${run.erased_messages} messages erased (final for over ${run.retention_days} days), ${run.deleted_sent_mail} sent mails deleted.</p>`
    : html`<p class="sub">Not run yet: it runs about an hour after start, then every hour.</p>`;
  return html`<section class="card" aria-labelledby="retention"><h2 id="retention">Retention</h2>${body}</section>`;
}

export function loginView(error: string | null, next: string): SafeHtml {
  return html`<div class="login card">
    <h1>Sign in</h1>
    <div class="flash error" role="alert" id="passkey-status" hidden></div>
    <p><button class="btn" type="button" data-passkey-signin="${next}" hidden>Use a passkey</button></p>
    <p class="sub">Or use a key: your personal key (hto_…), or ADMIN_KEY, or the key the service printed on its first start.</p>
    ${error ? html`<div class="flash error" role="alert">${error}</div>` : ''}
    <form method="post" action="/operator/login">
      <input type="hidden" name="next" value="${next}">
      <div class="field"><label for="key">Operator key</label><input id="key" name="key" type="password" autocomplete="current-password" required autofocus></div>
      <button class="btn" type="submit">Sign in</button>
    </form>
  </div>${PASSKEY_SCRIPTS}`;
}
