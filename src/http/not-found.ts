import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ServiceDeps } from '../services/context.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route exists only to answer 405 (documented): its method is not in any Allow list. */
    refusesMethod?: boolean;
  }
}

interface KnownRoute {
  pattern: RegExp;
  methods: Set<string>;
}

function toPattern(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

function notFoundMarkdown(deps: ServiceDeps, path: string): string {
  const base = deps.config.baseUrl;
  return [
    '# 404 not_found',
    '',
    `Nothing lives at \`${path.replace(/[`\r\n]/g, '').slice(0, 200)}\`. The real endpoints:`,
    '',
    `- \`POST ${base}/api/v1/tasks\` — submit a task for a human operator (JSON body; see the OpenAPI document)`,
    `- \`GET ${base}/api/v1/tasks/{task_id}\` — poll a task's status`,
    `- \`POST ${base}/api/v1/messages\` — send the operator a message`,
    `- \`GET ${base}/api/v1/services\` — the service catalog`,
    `- \`GET ${base}/api/v1/health\` — health`,
    `- \`POST ${base}/mcp\` — the same as MCP tools (streamable HTTP)`,
    '',
    `Documents: \`${base}/openapi.json\`, \`${base}/agent.json\`, \`${base}/llms.txt\`, \`${base}/api.md\`.`,
    '',
  ].join('\n');
}

/** A 404 page with the site's chrome, for browsers (built by the web pages, passed in by the app). */
export type HtmlNotFound = (reply: FastifyReply, path: string) => FastifyReply;

/** A browser asks for HTML first; an agent asks for JSON, markdown, or anything. */
function wantsHtml(accept: string): boolean {
  let htmlQ = 0;
  let other = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) || 0 : 1;
    if (type === 'text/html' || type === 'application/xhtml+xml') htmlQ = Math.max(htmlQ, weight);
    else if (type === 'application/json' || type === 'text/markdown' || type === 'text/plain') other = Math.max(other, weight);
  }
  return htmlQ > 0 && htmlQ >= other;
}

/**
 * Unknown paths get 404 with a markdown body pointing at the real endpoints (JSON for clients that
 * only accept JSON, an HTML page for browsers); a known path with the wrong method gets 405 with `Allow`.
 */
export function installNotFound(app: FastifyInstance, deps: ServiceDeps, htmlNotFound?: HtmlNotFound): void {
  const routes = new Map<string, KnownRoute>();
  app.addHook('onRoute', (route) => {
    // Catch-all routes (the CORS preflight's OPTIONS *) say nothing about which paths exist.
    if (route.url.includes('*') || route.config?.refusesMethod === true) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const entry = routes.get(route.url) ?? { pattern: toPattern(route.url), methods: new Set<string>() };
    for (const m of methods) entry.methods.add(m);
    routes.set(route.url, entry);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const route of routes.values()) {
      if (route.pattern.test(path)) for (const m of route.methods) allowed.add(m);
    }
    if (allowed.size > 0 && !allowed.has(request.method)) {
      if (allowed.has('GET')) allowed.add('HEAD');
      reply.header('Allow', [...allowed].sort().join(', '));
      return sendError(reply, new AppError('method_not_allowed', `${request.method} is not supported here. Allowed: ${[...allowed].sort().join(', ')}.`));
    }
    const accept = request.headers.accept ?? '';
    if (/application\/json/.test(accept) && !/text\/(markdown|plain|html|\*)|\*\/\*/.test(accept)) {
      return sendError(reply, new AppError('not_found', `Nothing lives at ${path.slice(0, 200)}. See ${deps.config.baseUrl}/openapi.json.`));
    }
    if (htmlNotFound && (request.method === 'GET' || request.method === 'HEAD') && wantsHtml(accept)) return htmlNotFound(reply.code(404), path);
    return reply.code(404).type('text/markdown; charset=utf-8').send(notFoundMarkdown(deps, path));
  });
}
