import { html, raw, type SafeHtml } from '../../domain/html.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import type { Session } from './auth/session.js';

/** The console's page shell and small shared pieces. Every value an agent wrote goes through `html`. */

export type Section = 'queue' | 'messages' | 'approve' | 'blocklist' | 'outbox' | 'stats' | 'team' | 'none';

export interface PageOptions {
  title: string;
  section: Section;
  session: Session | null;
  body: SafeHtml;
  /** Waiting tasks not opened by any operator yet: beside Queue, and in the title. */
  unseen?: number;
  /** Messages no operator has answered or marked done: beside Messages, and in the title. */
  waiting?: number;
  /** More for the "More" sheet (the queue's service level), below its links. */
  more?: SafeHtml;
}

/** The navigation: Queue and Messages always in view; the rest in "More" on a phone (one row). */
const NAV: [Exclude<Section, 'none'>, string, string, 'main' | 'more'][] = [
  ['queue', 'Queue', '/operator', 'main'],
  ['messages', 'Messages', '/operator/messages', 'main'],
  ['approve', 'Approve', '/operator/approve', 'more'],
  ['blocklist', 'Blocklist', '/operator/blocklist', 'more'],
  ['outbox', 'Outbox', '/operator/outbox', 'more'],
  ['stats', 'Stats', '/operator/stats', 'more'],
  ['team', 'Team', '/operator/team', 'more'],
];

function navCount(count: number | undefined, what: string): SafeHtml | '' {
  return count ? html`<span class="count" aria-label="${count} ${what}">${count}</span>` : '';
}

function navLink(key: Section, label: string, href: string, options: PageOptions, extra = ''): SafeHtml {
  const count = key === 'queue' ? navCount(options.unseen, 'new') : key === 'messages' ? navCount(options.waiting, 'waiting') : '';
  return html`<a class="${extra}" href="${href}" ${raw(options.section === key ? 'aria-current="page"' : '')}>${label}${count}</a>`;
}

export function page(options: PageOptions): string {
  const { session } = options;
  const signOut = (session: Session) => html`<form method="post" action="/operator/logout">
        ${csrfField(session)}
        <button class="btn ghost small" type="submit">Sign out</button>
      </form>`;
  const nav = session
    ? html`<nav class="nav" aria-label="Console">
        ${NAV.map(([key, label, href, where]) => navLink(key, label, href, options, where === 'more' ? 'wide-only' : ''))}
        <details class="more narrow-only"><summary>More</summary><div class="more-menu">
          ${NAV.filter(([, , , where]) => where === 'more').map(([key, label, href]) => navLink(key, label, href, options))}
          ${signOut(session)}
          ${options.more ?? ''}
        </div></details>
      </nav>
      <div class="wide-only">${signOut(session)}</div>`
    : '';
  const unread = (options.unseen ?? 0) + (options.waiting ?? 0);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${unread ? `(${unread}) ` : ''}${options.title} · Operator desk</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${CONSOLE_CSS.url}">
<link rel="manifest" href="/operator/manifest.webmanifest">
<meta name="theme-color" content="#3553d6">
<link rel="apple-touch-icon" href="/operator/assets/icon-192.png">
<script src="${CONSOLE_JS.url}" defer></script>
</head>
<body${session ? html` data-live data-title="${options.title} · Operator desk" data-unseen="${options.unseen ?? 0}" data-waiting="${options.waiting ?? 0}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header class="topbar"><div class="topbar-inner">
  <a class="brand" href="/operator"><span class="brand-mark" aria-hidden="true">HT</span><span class="brand-name">Operator desk</span></a>
  ${nav}
</div></header>
<main id="main">
${options.body}
</main>
</body>
</html>`.toString();
}

/** A task's name for people: the first words of its description (its type when it has none). */
export function taskTitle(task: { description: string; task_type: string }, max = 60): string {
  const flat = task.description.replace(/\s+/g, ' ').trim();
  if (flat === '') return humanType(task.task_type);
  if (flat.length <= max) return flat.replace(/[.\s]+$/, '');
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[,;:.\s]+$/, '')}…`;
}

/** Who sent a message, as a person reads it: the name they gave and their address. */
export function senderLabel(m: { from: string | null; reply_to: string }): string {
  if (m.from && m.reply_to) return `${m.from} <${m.reply_to}>`;
  return m.from || m.reply_to || 'Sender erased by retention';
}

/** How a task's result reaches the requester, in words. */
export function deliveryWords(delivery: string): string {
  return delivery === 'status_poll' ? 'Checks the status page' : 'By e-mail';
}

/** Messages that look like a withdrawal (the spec's way to withdraw a task), flagged for the operator. */
export const WITHDRAWAL = /\b(withdraw|cancel|no longer need|retract|abort)/i;

export function csrfField(session: Session): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrf}">`;
}

export function statusPill(status: string): SafeHtml {
  return html`<span class="pill st-${status.replace(/[^a-z_]/g, '')}">${status.replace('_', ' ')}</span>`;
}

/**
 * A deadline or other instant as the operator reads it: formatted, in UTC without script and in
 * the operator's own zone with it; `short` for the queue's narrow column (day and time).
 */
export function at(value: string | null, short = false): SafeHtml {
  if (!value) return html`<span class="sub">—</span>`;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return html`${value}`;
  const full = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const shown = short ? `${date.toUTCString().slice(0, 3)} ${date.toISOString().slice(11, 16)} UTC` : full;
  return html`<time datetime="${date.toISOString()}" title="${full}" data-local="${short ? 'short' : ''}">${shown}</time>`;
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
  // A moment a few seconds ahead (a held action's commit) is not "just now".
  if (abs < 30) return seconds > 0 ? `in ${abs} s` : 'just now';
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
