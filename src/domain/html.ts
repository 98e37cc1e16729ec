/**
 * Safe HTML building for every page: `html` escapes each interpolated value unless it is already
 * `SafeHtml` (the result of another `html` or of `raw`). Anything an agent wrote goes in as a
 * plain value and so can never become markup.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

const SPECIAL = /[&<>"'`]/;
const SPECIALS = /[&<>"'`]/g;

export function escapeHtml(value: unknown): string {
  const text = String(value ?? '');
  // Most values hold none: a test costs less than a replace that finds nothing.
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c] ?? c) : text;
}

type Value = SafeHtml | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: Value) => render(v)).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Marks trusted markup (our own constants) as safe. Never pass agent text here. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
