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

export function fieldsText(fields: Field[]): string {
  const width = Math.max(...fields.map((f) => f.label.length)) + 1;
  return fields.map((f) => `${`${f.label}:`.padEnd(width + 1)}${f.value}`).join('\n');
}

export function fieldsHtml(fields: Field[]): SafeHtml {
  return html`<table cellpadding="4" cellspacing="0" style="border-collapse:collapse">${fields.map(
    (f) =>
      html`<tr><th align="left" valign="top" style="padding-right:12px">${f.label}</th><td>${f.href ? html`<a href="${f.href}">${f.value}</a>` : f.value}</td></tr>`,
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
