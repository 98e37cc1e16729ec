import { html, type SafeHtml } from '../../domain/html.js';

/** A mail's two parts. The subject is built by the caller and sanitized by the outbox. */
export interface MailParts {
  subject: string;
  text: string;
  html: string;
}

/** A labelled value, shown as `Label: value` in text and as a table row in HTML. */
export interface Field {
  label: string;
  value: string;
  /** Render the value as a link (our own URLs only). */
  href?: string;
}

/** Every line break a mail reader may honour (CRLF, CR, LF, VT, FF, NEL, U+2028, U+2029). */
const LINE_BREAK = /\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029]/;
/** The other control characters (tab kept): shown as U+FFFD rather than acted on by a terminal or reader. */
const CONTROL = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F]/g;
/** A line break or another control character (both sets above). */
const ODD_CHARACTER = /[\n\r\u000B\u000C\u0085\u2028\u2029\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F]/;

/**
 * `Label: value` lines. A value stays on its line whatever it holds (stored before one-line fields
 * refused control characters, or imported): line breaks become spaces, so no value can add a line
 * that looks like one of these.
 */
export function fieldsText(fields: Field[]): string {
  const width = Math.max(...fields.map((f) => f.label.length)) + 1;
  // Most values hold neither: a test costs less than a split and a replace that find nothing.
  const oneLine = (value: string) => (ODD_CHARACTER.test(value) ? value.split(LINE_BREAK).join(' ').replace(CONTROL, '\uFFFD') : value);
  return fields.map((f) => `${`${f.label}:`.padEnd(width + 1)}${oneLine(f.value)}`).join('\n');
}

/**
 * Agent-written multi-line text in a plain-text mail, set apart from the service's own lines:
 * every line, whatever break started it, begins with `| `, so no line of it can pose as a field
 * line or an instruction of the service. `end` closes the block.
 */
export function quoteText(text: string, end: string): string {
  const lines = text.replace(CONTROL, '\uFFFD').split(LINE_BREAK);
  return [...lines.map((line) => `| ${line}`), end].join('\n');
}

/**
 * One row a line: the table on one line passed SMTP's 998-character limit with nine fields, and
 * that single line sent the whole HTML part quoted-printable, encoded a character at a time on the
 * mail thread. A break between rows changes nothing on the page; a long value still can (its part
 * then goes quoted-printable, as it must).
 */
export function fieldsHtml(fields: Field[]): SafeHtml {
  return html`<table cellpadding="4" cellspacing="0" style="border-collapse:collapse">
${fields.map(
  (f) =>
    html`<tr><th align="left" valign="top" style="padding-right:12px">${f.label}</th><td>${f.href ? html`<a href="${f.href}">${f.value}</a>` : f.value}</td></tr>
`,
)}</table>`;
}

/** Agent-written or operator-written text as a block that keeps its line breaks, escaped. */
export function quoteHtml(text: string): SafeHtml {
  return html`<pre style="white-space:pre-wrap;font-family:inherit;background:#f6f6f6;padding:12px;border-radius:4px">${text}</pre>`;
}

/** The HTML document around a mail body. */
export function documentHtml(title: string, body: SafeHtml): string {
  return html`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:720px">${body}</body></html>`.toString();
}
