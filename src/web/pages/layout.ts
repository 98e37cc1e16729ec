import type { FastifyReply } from 'fastify';
import { PRODUCT_NAME } from '../../docs/documents.js';
import { html, raw, type SafeHtml } from '../../domain/html.js';
import { API_VERSION, SERVICE_VERSION } from '../../version.js';
import { CONTENT_SECURITY_POLICY, PAGES_CSS, PAGES_JS } from './style.js';

export type Section = 'home' | 'status' | 'docs';

export interface PageOptions {
  title: string;
  description?: string;
  section?: Section;
  body: SafeHtml;
  /** Pages that hold a task id keep it out of search engines. */
  noindex?: boolean;
}

const NAV: Array<[Section, string, string]> = [
  ['home', '/', 'Submit a task'],
  ['status', '/tasks', 'Check a task'],
  ['docs', '/docs', 'For agents'],
];

/** The page shell every public page shares: one stylesheet, one small optional script, a skip link, a footer. */
export function page(options: PageOptions): string {
  const title = options.title === PRODUCT_NAME ? PRODUCT_NAME : `${options.title} · ${PRODUCT_NAME}`;
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${options.description ? html`<meta name="description" content="${options.description}">` : ''}
${options.noindex ? raw('<meta name="robots" content="noindex, nofollow">') : ''}
<link rel="alternate" type="text/markdown" href="/index.md" title="This service in markdown">
<link rel="alternate" type="application/json" href="/agent.json" title="Platform manifest for agents">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${PAGES_CSS.url}">
<script src="${PAGES_JS.url}" defer></script>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="site"><div class="bar">
<a class="brand" href="/"><span class="mark" aria-hidden="true"><svg width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"><circle cx="12" cy="7.5" r="3.5"/><path d="M4.5 20.5c1.2-4 4-6 7.5-6s6.3 2 7.5 6"/></svg></span><span>${PRODUCT_NAME}</span></a>
<nav class="main" aria-label="Main">${NAV.map(([id, href, label]) => html`<a href="${href}"${raw(options.section === id ? ' aria-current="page"' : '')}>${label}</a>`)}</nav>
</div></header>
<main id="content">
${options.body}
</main>
<footer class="site">
<p>A human reviews every task. Free during the pilot; this service never asks for payment or credentials.</p>
<nav aria-label="For agents"><ul class="links"><li><a href="/docs">Documents for agents</a></li><li><a href="/openapi.json">OpenAPI</a></li><li><a href="/llms.txt">llms.txt</a></li><li><a href="/api/v1/health">Health</a></li></ul></nav>
<p>Version ${SERVICE_VERSION}, API ${API_VERSION}</p>
</footer>
</body>
</html>`}\n`;
}

/** Sends a page with the headers every page carries. */
export function sendPage(reply: FastifyReply, status: number, body: string, options: { noStore?: boolean } = {}): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', options.noStore ? 'no-referrer' : 'same-origin')
    .header('Cache-Control', options.noStore ? 'no-store' : 'no-cache')
    .header('Vary', 'Accept')
    .send(body);
}

export function sendMarkdown(reply: FastifyReply, status: number, markdown: string, options: { noStore?: boolean } = {}): FastifyReply {
  return reply
    .code(status)
    .type('text/markdown; charset=utf-8')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', options.noStore ? 'no-store' : 'no-cache')
    .header('Vary', 'Accept')
    .send(markdown);
}
