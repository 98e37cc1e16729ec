import { fieldTitle, fieldType, isJsonObject, type JsonObject, resolveSchema } from '../../../domain/answers/response-schema.js';
import { html, type SafeHtml } from '../../../domain/html.js';

/**
 * What a task's response schema asks for, as the operator reads it before accepting: each field
 * with its title, its kind in words and whether it is required, objects and arrays nested. The
 * schema was vetted at submission (depth and expansion bounded), so this walk is bounded too;
 * every title and description is the agent's text, escaped by `html`.
 */
export function schemaOutline(schema: JsonObject): SafeHtml {
  return html`<div class="schema-outline"><p class="sub">The answer is a form with these fields:</p>${fieldList(resolveSchema(schema, schema), schema)}</div>`;
}

const FORMAT_WORDS: Record<string, string> = { date: 'date', 'date-time': 'date and time', time: 'time', email: 'e-mail address', uri: 'link' };

function range(s: JsonObject): string {
  const min = typeof s.minimum === 'number' ? s.minimum : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : undefined;
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  return max !== undefined ? ` of at most ${max}` : '';
}

/** A field's kind in words: "yes/no", "whole number from 1 to 5", "one of: a, b". */
function kind(s: JsonObject, root: JsonObject): string {
  if (s.const !== undefined) return `always ${JSON.stringify(s.const)}`;
  if (Array.isArray(s.enum)) return `one of: ${s.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  const branches = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : undefined;
  if (branches) return `one of ${branches.length} kinds: ${branches.map((b, i) => fieldTitle(resolveSchema(b, root), `kind ${i + 1}`)).join(', ')}`;
  switch (fieldType(s)) {
    case 'boolean':
      return 'yes/no';
    case 'integer':
      return `whole number${range(s)}`;
    case 'number':
      return `number${range(s)}`;
    case 'string':
      return typeof s.format === 'string' ? (FORMAT_WORDS[s.format] ?? 'text') : 'text';
    case 'object':
      return 'group';
    case 'array':
      return 'list';
    default:
      return 'any value';
  }
}

function fieldList(s: JsonObject, root: JsonObject): SafeHtml | '' {
  const properties = isJsonObject(s.properties) ? s.properties : {};
  const need = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
  const entries = Object.entries(properties);
  if (entries.length === 0) return '';
  return html`<ul class="schema-fields">${entries.map(([key, child]) => field(key, resolveSchema(child, root), need.has(key), root))}</ul>`;
}

function field(key: string, s: JsonObject, required: boolean, root: JsonObject): SafeHtml {
  const items = fieldType(s) === 'array' ? resolveSchema(s.items, root) : undefined;
  const nested = fieldType(s) === 'object' ? fieldList(s, root) : items && fieldType(items) === 'object' ? fieldList(items, root) : '';
  const what = items ? (fieldType(items) === 'object' ? 'list of entries with these fields' : `list of ${kind(items, root)}`) : kind(s, root);
  return html`<li><strong>${fieldTitle(s, key)}</strong> <span class="sub">— ${what}, ${required ? 'required' : 'optional'}</span>${
    typeof s.description === 'string' && s.description !== '' ? html`<br><span class="hint">${s.description}</span>` : ''
  }${nested}</li>`;
}
