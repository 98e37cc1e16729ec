import { fieldTitle, fieldType, isJsonObject, type JsonObject, pointerSegment, resolveSchema as resolve } from '../../../domain/answers/response-schema.js';
import { html, type SafeHtml } from '../../../domain/html.js';
import type { Form } from '../console-kit.js';
import { alternatives, choiceIndex } from './result-form-parse.js';

/**
 * The deliver step of a task with a response schema, as a form (contract "Structured answers"):
 * one input per field of the schema, fieldsets for objects, repeatable rows for arrays, a choice
 * for oneOf/anyOf, labels and hints from title/description, defaults pre-filled. It works without
 * a script: "Check" and the row and choice buttons post the form and the server answers it with
 * the errors next to their fields (result-routes.ts). Field names are JSON pointers
 * (result-form-parse.ts reads them back).
 */

export interface ResultDraft {
  /** The value to show (what the operator entered, or nothing yet: the schema's defaults). */
  value?: unknown;
  /** The form as posted, for the choices of oneOf/anyOf. */
  form?: Form;
  /** Details lines (`result/<pointer>: why`) to show next to their fields. */
  problems?: string[];
  /** The raw JSON editor's text. */
  json?: string;
}

interface Ctx {
  root: JsonObject;
  form: Form;
  errors: Map<string, string[]>;
  /** Where the form's own buttons (check, rows, choices) post. */
  action: string;
}

const MAX_ROWS = 200;

/** `result/a/0: why` → ['/a/0', 'why'] */
function errorMap(problems: string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of problems) {
    const match = /^result(\S*): (.*)$/s.exec(line);
    if (!match) continue;
    const [, pointer = '', why = ''] = match;
    map.set(pointer, [...(map.get(pointer) ?? []), why]);
  }
  return map;
}

/** An id safe in HTML and CSS for a pointer. */
function idFor(prefix: string, pointer: string): string {
  return `${prefix}${pointer.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
}

const labelOf = fieldTitle;

function hint(s: JsonObject, id: string): SafeHtml | string {
  return typeof s.description === 'string' && s.description !== '' ? html`<p class="hint" id="${id}-hint">${s.description}</p>` : '';
}

function errorsOf(ctx: Ctx, pointer: string, id: string): SafeHtml | string {
  const list = ctx.errors.get(pointer);
  return list ? html`<p class="field-error" id="${id}-error">${list.join('; ')}</p>` : '';
}

function describedBy(ctx: Ctx, s: JsonObject, pointer: string, id: string): string {
  const ids = [typeof s.description === 'string' && s.description !== '' ? `${id}-hint` : '', ctx.errors.has(pointer) ? `${id}-error` : ''].filter(Boolean);
  return ids.join(' ');
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** An input's value for the date-time and time formats (the inputs carry no offset: shown as UTC). */
function inputValue(value: unknown, format: unknown): string {
  const text = asText(value);
  if (format === 'date-time') return text.replace(/(:\d{2})?(\.\d+)?(Z|[+-]00:00)$/, '').slice(0, 16);
  if (format === 'time') return text.replace(/(\.\d+)?(Z|[+-]00:00)$/, '');
  return text;
}

const INPUT_TYPES: Record<string, string> = { date: 'date', 'date-time': 'datetime-local', time: 'time', email: 'email', uri: 'url' };

function leaf(s: JsonObject, pointer: string, value: unknown, label: string, required: boolean, ctx: Ctx): SafeHtml {
  const id = idFor('f', pointer);
  const name = `r${pointer}`;
  const invalid = ctx.errors.has(pointer) ? 'true' : 'false';
  const described = describedBy(ctx, s, pointer, id);
  const mark = required ? html` <span class="sub">(required)</span>` : '';
  const utc = s.format === 'date-time' || s.format === 'time' ? html` <span class="sub">(UTC)</span>` : '';
  let control: SafeHtml;
  if (Array.isArray(s.enum)) {
    const current = value === undefined ? undefined : JSON.stringify(value);
    control = html`<select id="${id}" name="${name}" aria-invalid="${invalid}" aria-describedby="${described}">
      <option value="">— choose —</option>
      ${s.enum.map((option) => html`<option value="${JSON.stringify(option)}"${JSON.stringify(option) === current ? html` selected` : ''}>${asText(option)}</option>`)}
    </select>`;
  } else if (fieldType(s) === 'boolean') {
    // Yes or No, nothing chosen until the operator chooses (a default of the schema aside): a
    // checkbox cannot be left unanswered, since unchecked is false, so a required one was never missing.
    const choice = (answer: boolean, words: string) =>
      html`<label class="choice"><input type="radio" id="${id}-${words.toLowerCase()}" name="${name}" value="${String(answer)}"${value === answer ? html` checked` : ''} aria-invalid="${invalid}"> <span>${words}</span></label>`;
    return html`<fieldset class="field yes-no" id="${id}"${described ? html` aria-describedby="${described}"` : ''}>
      <legend>${label}${mark}</legend>
      <div class="row">${choice(true, 'Yes')}${choice(false, 'No')}</div>
      ${hint(s, id)}${errorsOf(ctx, pointer, id)}
    </fieldset>`;
  } else if (fieldType(s) === 'number' || fieldType(s) === 'integer') {
    const step = fieldType(s) === 'integer' ? '1' : typeof s.multipleOf === 'number' ? String(s.multipleOf) : 'any';
    const min = typeof s.minimum === 'number' ? html` min="${s.minimum}"` : '';
    const max = typeof s.maximum === 'number' ? html` max="${s.maximum}"` : '';
    control = html`<input type="number" id="${id}" name="${name}" step="${step}"${min}${max} inputmode="decimal" value="${asText(value)}" aria-invalid="${invalid}" aria-describedby="${described}">`;
  } else if (fieldType(s) === 'string' && (typeof s.maxLength !== 'number' || s.maxLength > 200) && s.format === undefined) {
    control = html`<textarea id="${id}" name="${name}" rows="3" aria-invalid="${invalid}" aria-describedby="${described}">${asText(value)}</textarea>`;
  } else {
    const type = INPUT_TYPES[String(s.format)] ?? 'text';
    const step = s.format === 'time' || s.format === 'date-time' ? html` step="1"` : '';
    control = html`<input type="${type}"${step} id="${id}" name="${name}" value="${inputValue(value, s.format)}" aria-invalid="${invalid}" aria-describedby="${described}">`;
  }
  return html`<div class="field">
    <label for="${id}">${label}${mark}${utc}</label>
    ${control}
    ${hint(s, id)}${errorsOf(ctx, pointer, id)}
  </div>`;
}

function node(schema: unknown, pointer: string, value: unknown, label: string, required: boolean, ctx: Ctx): SafeHtml {
  const s = resolve(schema, ctx.root);
  const shown = value === undefined ? s.default : value;
  if (s.const !== undefined) {
    return html`<div class="field"><span class="label">${label}</span> <code>${asText(s.const)}</code></div>`;
  }
  if (Array.isArray(s.enum)) return leaf(s, pointer, shown, label, required, ctx);
  const alts = alternatives(s, ctx.root);
  const id = idFor('f', pointer);
  if (alts !== undefined) {
    const chosen = choiceIndex(ctx.form, pointer, alts.length);
    return html`<fieldset class="result-group">
      <legend>${label}</legend>${hint(s, id)}${errorsOf(ctx, pointer, id)}
      <div class="row">
        <label for="${idFor('c', pointer)}">Kind of answer</label>
        <select id="${idFor('c', pointer)}" name="c${pointer}">
          ${alts.map((alt, i) => html`<option value="${i}"${i === chosen ? html` selected` : ''}>${labelOf(alt, `Option ${i + 1}`)}</option>`)}
        </select>
        <button class="btn small secondary" type="submit" name="form_op" value="choose" formaction="${ctx.action}" formnovalidate>Show its fields</button>
      </div>
      ${node(alts[chosen], pointer, shown, labelOf(alts[chosen] ?? {}, label), required, ctx)}
    </fieldset>`;
  }
  switch (fieldType(s)) {
    case 'object': {
      const properties = isJsonObject(s.properties) ? s.properties : {};
      const need = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
      const current = isJsonObject(shown) ? shown : {};
      const fields = Object.entries(properties).map(([key, child]) =>
        node(child, `${pointer}/${pointerSegment(key)}`, current[key], labelOf(resolve(child, ctx.root), key), need.has(key), ctx),
      );
      if (pointer === '') return html`${errorsOf(ctx, pointer, id)}${fields}`;
      return html`<fieldset class="result-group"><legend>${label}</legend>${hint(s, id)}${errorsOf(ctx, pointer, id)}${fields}</fieldset>`;
    }
    case 'array': {
      const rows = Array.isArray(shown) ? shown.slice(0, MAX_ROWS) : [];
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      return html`<fieldset class="result-group">
        <legend>${label}</legend>${hint(s, id)}${errorsOf(ctx, pointer, id)}
        <input type="hidden" name="n${pointer}" value="${rows.length}">
        ${rows.map(
          (row, i) => html`<div class="result-row">
            ${node(prefix[i] ?? s.items ?? {}, `${pointer}/${i}`, row, `${label} ${i + 1}`, true, ctx)}
            <button class="btn small secondary" type="submit" name="form_op" value="remove:${pointer}/${i}" formaction="${ctx.action}" formnovalidate>Remove ${label} ${i + 1}</button>
          </div>`,
        )}
        <button class="btn small secondary" type="submit" name="form_op" value="add:${pointer}" formaction="${ctx.action}" formnovalidate>Add ${label}</button>
      </fieldset>`;
    }
    default:
      return leaf(s, pointer, shown, label, required, ctx);
  }
}

/** The form's fields for a schema (inside the deliver form of task-view.ts). */
export function resultFields(schema: JsonObject, draft: ResultDraft, action: string): SafeHtml {
  const ctx: Ctx = { root: schema, form: draft.form ?? {}, errors: errorMap(draft.problems ?? []), action };
  return html`<div class="result-form">${node(schema, '', draft.value, '', true, ctx)}</div>`;
}
