import { html, raw, type SafeHtml } from '../../domain/html.js';
import type { Session } from './session.js';

/** The console's page shell and small shared pieces. Every value an agent wrote goes through `html`. */

export type Section = 'queue' | 'messages' | 'blocklist' | 'outbox' | 'stats' | 'team' | 'none';

export interface PageOptions {
  title: string;
  section: Section;
  session: Session | null;
  body: SafeHtml;
  /** Open tasks, shown beside Queue in the navigation. */
  openCount?: number;
  /** Waiting tasks not opened yet: the title leads with it, so a background tab shows it. */
  unseen?: number;
}

const NAV: [Exclude<Section, 'none'>, string, string][] = [
  ['queue', 'Queue', '/operator'],
  ['messages', 'Messages', '/operator/messages'],
  ['blocklist', 'Blocklist', '/operator/blocklist'],
  ['outbox', 'Outbox', '/operator/outbox'],
  ['stats', 'Stats', '/operator/stats'],
  ['team', 'Team', '/operator/team'],
];

export function page(options: PageOptions): string {
  const { session } = options;
  const nav = session
    ? html`<nav class="nav" aria-label="Console">
        ${NAV.map(
          ([key, label, href]) =>
            html`<a href="${href}" ${raw(options.section === key ? 'aria-current="page"' : '')}>${label}${key === 'queue' && options.openCount ? html`<span class="count" aria-label="${options.openCount} open">${options.openCount}</span>` : ''}</a>`,
        )}
      </nav>
      <form method="post" action="/operator/logout">
        ${csrfField(session)}
        <button class="btn ghost small" type="submit">Sign out</button>
      </form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${options.unseen ? `(${options.unseen}) ` : ''}${options.title} · Operator desk</title>
<link rel="stylesheet" href="/operator/assets/console.css">
<link rel="manifest" href="/operator/manifest.webmanifest">
<meta name="theme-color" content="#3553d6">
<link rel="apple-touch-icon" href="/operator/assets/icon-192.png">
<script src="/operator/assets/console.js" defer></script>
</head>
<body${session ? html` data-live data-title="${options.title} · Operator desk" data-unseen="${options.unseen ?? 0}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header class="topbar"><div class="topbar-inner">
  <a class="brand" href="/operator"><span class="brand-mark" aria-hidden="true">HT</span>Operator desk</a>
  ${nav}
</div></header>
<main id="main">
${options.body}
</main>
</body>
</html>`.toString();
}

/** Messages that look like a withdrawal (the spec's way to withdraw a task), flagged for the operator. */
export const WITHDRAWAL = /\b(withdraw|cancel|no longer need|retract|abort)/i;

export function csrfField(session: Session): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrf}">`;
}

export function statusPill(status: string): SafeHtml {
  return html`<span class="pill st-${status.replace(/[^a-z_]/g, '')}">${status.replace('_', ' ')}</span>`;
}

export function humanType(taskType: string): string {
  const text = taskType.replace(/_/g, ' ').replace(/\bai\b/g, 'AI');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "3 h ago" / "in 2 d", relative to the service clock. */
export function relative(at: string | null, now: Date): string {
  if (!at) return '';
  const then = Date.parse(at);
  if (Number.isNaN(then)) return at;
  const seconds = Math.round((then - now.getTime()) / 1000);
  const abs = Math.abs(seconds);
  const unit =
    abs < 60 ? `${abs} s` : abs < 3600 ? `${Math.floor(abs / 60)} min` : abs < 86_400 ? `${Math.floor(abs / 3600)} h` : `${Math.floor(abs / 86_400)} d`;
  if (abs < 30) return 'just now';
  return seconds < 0 ? `${unit} ago` : `in ${unit}`;
}

/** A timestamp for people: UTC date and time (the console script shows local time, UTC in the tooltip). */
export function when(at: string | null, now: Date): SafeHtml {
  if (!at) return html`<span class="sub">—</span>`;
  const date = new Date(at);
  const shown = Number.isNaN(date.getTime()) ? at : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${at}" title="${shown}" data-local>${shown}</time> <span class="sub">(${relative(at, now)})</span>`;
}

export function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

export function flash(kind: 'ok' | 'error', title: string, details: string[] = []): SafeHtml {
  return html`<div class="flash ${kind}" role="${kind === 'error' ? 'alert' : 'status'}"><strong>${title}</strong>${
    details.length > 0 ? html`<ul>${details.map((d) => html`<li>${d}</li>`)}</ul>` : ''
  }</div>`;
}

/** The value for a datetime-local input, in UTC (the script shows it in the operator's zone). */
export function utcInputValue(date: Date): string {
  return date.toISOString().slice(0, 16);
}
