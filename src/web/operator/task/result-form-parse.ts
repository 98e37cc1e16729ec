import { fieldType, isJsonObject, type JsonObject, pointerSegment, resolveSchema as resolve } from '../../../domain/answers/response-schema.js';
import type { Form } from '../console-kit.js';

/**
 * Reads the console's result form (result-form-view.ts) back into a JSON value, walking the
 * task's response schema: each field is named `r<JSON pointer>`, each oneOf/anyOf choice
 * `c<pointer>`, each array's row count `n<pointer>`. What cannot be read (a number that is not
 * one) is a detail naming its pointer, as the validator's are. The schema was vetted at
 * submission (bounded depth and expansion), so this walk is bounded too.
 */

const MAX_ROWS = 200;

export interface ParsedResult {
  value: JsonObject;
  problems: string[];
}

/** The alternatives of a oneOf/anyOf, each merged with the keywords beside it. */
export function alternatives(schema: JsonObject, root: JsonObject): JsonObject[] | undefined {
  const list = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (list === undefined) return undefined;
  const { oneOf: _one, anyOf: _any, ...rest } = schema;
  return list.map((branch) => {
    const b = resolve(branch, root);
    const properties = { ...(isJsonObject(rest.properties) ? rest.properties : {}), ...(isJsonObject(b.properties) ? b.properties : {}) };
    return { ...rest, ...b, properties };
  });
}

export function choiceIndex(form: Form, pointer: string, count: number): number {
  const n = Number(form[`c${pointer}`] ?? 0);
  return Number.isInteger(n) && n >= 0 && n < count ? n : 0;
}

export function parseResultForm(form: Form, root: JsonObject): ParsedResult {
  const problems: string[] = [];
  const value = parseNode(root, '', form, root, problems);
  return { value: isJsonObject(value) ? value : {}, problems };
}

function parseNode(schema: unknown, pointer: string, form: Form, root: JsonObject, problems: string[]): unknown {
  const s = resolve(schema, root);
  if (s.const !== undefined) return s.const;
  const field = typeof form[`r${pointer}`] === 'string' ? (form[`r${pointer}`] as string) : undefined;
  if (Array.isArray(s.enum)) return field === undefined || field === '' ? undefined : jsonOr(field);
  const alts = alternatives(s, root);
  if (alts !== undefined) return parseNode(alts[choiceIndex(form, pointer, alts.length)], pointer, form, root, problems);
  switch (fieldType(s)) {
    case 'object': {
      const out: JsonObject = {};
      for (const [key, child] of Object.entries(isJsonObject(s.properties) ? s.properties : {})) {
        const v = parseNode(child, `${pointer}/${pointerSegment(key)}`, form, root, problems);
        if (v !== undefined) out[key] = v;
      }
      return out;
    }
    case 'array': {
      const rows = Math.min(MAX_ROWS, Math.max(0, Math.floor(Number(form[`n${pointer}`] ?? 0)) || 0));
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      return Array.from({ length: rows }, (_, i) => parseNode(prefix[i] ?? s.items ?? {}, `${pointer}/${i}`, form, root, problems) ?? null);
    }
    case 'boolean':
      // Yes, No, or nothing chosen (absent: a required field is then reported missing).
      return field === 'true' ? true : field === 'false' ? false : undefined;
    case 'number':
    case 'integer': {
      if (field === undefined || field.trim() === '') return undefined;
      const n = Number(field);
      if (!Number.isFinite(n)) problems.push(`result${pointer}: must be a number`);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'null':
      return null;
    case 'string':
      return field === undefined || field === '' ? undefined : withOffset(field, s.format);
    default:
      return field === undefined || field === '' ? undefined : jsonOr(field);
  }
}

/** The browser's date-time and time inputs carry no offset; the form labels them UTC. */
function withOffset(text: string, format: unknown): string {
  if (format === 'date-time' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)) return `${text.length === 16 ? `${text}:00` : text}Z`;
  if (format === 'time' && /^\d{2}:\d{2}(:\d{2})?$/.test(text)) return `${text.length === 5 ? `${text}:00` : text}Z`;
  return text;
}

function jsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The value at a JSON pointer of `root` (undefined when absent). */
export function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isJsonObject(node)) node = Object.hasOwn(node, key) ? node[key] : undefined;
    else return undefined;
  }
  return node;
}
