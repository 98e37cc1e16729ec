import { fieldTitle, isJsonObject, type JsonObject, resolveSchema } from '../../domain/answers/response-schema.js';
import { html, type SafeHtml } from '../../domain/html.js';

/**
 * A delivered structured result as a person reads it (the status page, the console): a table of
 * name and value, nested objects as nested tables, arrays as numbered lists. Each name is the
 * field's `title` in the task's response schema when it has one (as the console's answer form
 * labels it), else its key. Every value is agent- or operator-supplied text, escaped by `html`.
 * Nesting follows the result, which the schema bounded (at most 10 levels).
 */
export function resultTable(value: unknown, schema?: unknown): SafeHtml {
  return table(value, schema, isJsonObject(schema) ? schema : {});
}

/** The schema of a property: from `properties`, else from the first oneOf/anyOf branch that names it. */
function propertyOf(s: JsonObject, key: string, root: JsonObject): unknown {
  if (isJsonObject(s.properties) && key in s.properties) return s.properties[key];
  const branches = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : [];
  for (const branch of branches) {
    const b = resolveSchema(branch, root);
    if (isJsonObject(b.properties) && key in b.properties) return b.properties[key];
  }
  return undefined;
}

function table(value: unknown, schema: unknown, root: JsonObject): SafeHtml {
  const s = resolveSchema(schema, root);
  if (Array.isArray(value)) {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    return value.length === 0
      ? html`<span class="sub">none</span>`
      : html`<ol class="result-list">${value.map((item, i) => html`<li>${table(item, prefix[i] ?? s.items, root)}</li>`)}</ol>`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return html`<span class="sub">none</span>`;
    return html`<table class="result-table"><tbody>${entries.map(([key, v]) => {
      const child = propertyOf(s, key, root);
      return html`<tr><th scope="row">${fieldTitle(resolveSchema(child, root), key)}</th><td>${table(v, child, root)}</td></tr>`;
    })}</tbody></table>`;
  }
  if (typeof value === 'boolean') return html`${value ? 'Yes' : 'No'}`;
  if (value === null) return html`<span class="sub">—</span>`;
  return html`${String(value)}`;
}
