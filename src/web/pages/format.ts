import { html, type SafeHtml } from '../../domain/html.js';

/** How the pages say times and durations to a person. */

/** "3 h 20 min", "45 min", "2 days 4 h"; "no data yet" for null. */
export function duration(seconds: number | null): string {
  if (seconds === null) return 'no data yet';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} days` : `${days} days ${hours % 24} h`;
}

/** "10 Mar 2030, 10:00 UTC" from an ISO timestamp; the text itself when it does not parse. */
export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const ms = Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(ms)) return value;
  const d = new Date(ms);
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * A timestamp as markup: the server writes UTC in a `<time datetime>`; the pages' small script
 * (src/web/assets/pages.js) rewrites it in the reader's own time zone with a relative time, and keeps UTC in the
 * tooltip. Without the script the UTC text stays, which says so.
 */
export function timeHtml(value: string | null | undefined): SafeHtml {
  if (!value) return html`—`;
  const text = when(value);
  if (text === value) return html`${value}`;
  return html`<time datetime="${value}" title="${text}" data-local>${text}</time>`;
}
