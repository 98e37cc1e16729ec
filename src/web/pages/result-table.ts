import { html, type SafeHtml } from '../../domain/html.js';

/**
 * A delivered structured result as a person reads it (the status page, the console): a table of
 * name and value, nested objects as nested tables, arrays as numbered lists. Every value is
 * agent- or operator-supplied text, escaped by `html`. Nesting follows the result, which the
 * schema bounded (at most 10 levels).
 */
export function resultTable(value: unknown): SafeHtml {
  if (Array.isArray(value)) {
    return value.length === 0
      ? html`<span class="sub">none</span>`
      : html`<ol class="result-list">${value.map((item) => html`<li>${resultTable(item)}</li>`)}</ol>`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return html`<span class="sub">none</span>`;
    return html`<table class="result-table"><tbody>${entries.map(([key, v]) => html`<tr><th scope="row">${key}</th><td>${resultTable(v)}</td></tr>`)}</tbody></table>`;
  }
  if (typeof value === 'boolean') return html`${value ? 'Yes' : 'No'}`;
  if (value === null) return html`<span class="sub">—</span>`;
  return html`${String(value)}`;
}
