import { html, raw, type SafeHtml } from './html.js';

/**
 * A tiny document model that renders to markdown and to HTML, so /api.md and its human page (or a
 * task's markdown and its status page) are one text in two forms. Inline text may use `code`,
 * **bold** and [label](url); everything else is literal. HTML output escapes every piece.
 */
export type Block =
  | { h: 1 | 2 | 3; text: string; id?: string }
  | { p: string }
  | { quote: string }
  | { list: string[] }
  | { code: string; lang?: string }
  | { table: { head: string[]; rows: string[][] } };

const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

function safeHref(url: string): string | null {
  return /^(https?:\/\/|\/|#)/.test(url) ? url : null;
}

export function inlineHtml(text: string): SafeHtml {
  const parts: SafeHtml[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    parts.push(html`${text.slice(last, m.index)}`);
    if (m[1] !== undefined) parts.push(html`<code>${m[1]}</code>`);
    else if (m[2] !== undefined) parts.push(html`<strong>${m[2]}</strong>`);
    else {
      const href = safeHref(m[4] ?? '');
      parts.push(href ? html`<a href="${href}">${m[3]}</a>` : html`${m[0]}`);
    }
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(html`${text.slice(last)}`);
  return html`${parts}`;
}

/** A fence longer than any backtick run in the text, so quoted text cannot close it. */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function toMarkdown(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    if ('h' in b) out.push(`${'#'.repeat(b.h)} ${b.text}`);
    else if ('p' in b) out.push(b.p);
    else if ('quote' in b)
      out.push(
        b.quote
          .split('\n')
          .map((l) => `> ${l}`)
          .join('\n'),
      );
    else if ('list' in b) out.push(b.list.map((item) => `- ${item}`).join('\n'));
    else if ('code' in b) {
      const f = fence(b.code);
      out.push(`${f}${b.lang ?? ''}\n${b.code}\n${f}`);
    } else {
      const { head, rows } = b.table;
      out.push([`| ${head.map(cell).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n'));
    }
  }
  return `${out.join('\n\n')}\n`;
}

export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function toHtml(blocks: readonly Block[], options: { headingOffset?: number } = {}): SafeHtml {
  const offset = options.headingOffset ?? 0;
  return html`${blocks.map((b) => {
    if ('h' in b) {
      const level = Math.min(6, b.h + offset);
      return html`${raw(`<h${level} id="`)}${b.id ?? slug(b.text)}">${inlineHtml(b.text)}${raw(`</h${level}>`)}`;
    }
    if ('p' in b) return html`<p>${inlineHtml(b.p)}</p>`;
    if ('quote' in b) return html`<blockquote><p>${inlineHtml(b.quote)}</p></blockquote>`;
    if ('list' in b) return html`<ul>${b.list.map((item) => html`<li>${inlineHtml(item)}</li>`)}</ul>`;
    if ('code' in b) return html`<pre tabindex="0"><code>${b.code}</code></pre>`;
    return html`<div class="table-wrap" tabindex="0"><table><thead><tr>${b.table.head.map((h) => html`<th scope="col">${inlineHtml(h)}</th>`)}</tr></thead><tbody>${b.table.rows.map(
      (r) => html`<tr>${r.map((c) => html`<td>${inlineHtml(c)}</td>`)}</tr>`,
    )}</tbody></table></div>`;
  })}`;
}
