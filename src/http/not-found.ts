import type { FastifyInstance } from 'fastify';
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

/**
 * Unknown paths get 404 with a markdown body pointing at the real endpoints (JSON for clients that
 * only accept JSON); a known path with the wrong method gets 405 with `Allow`.
 */
export function installNotFound(app: FastifyInstance, deps: ServiceDeps): void {
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
    return reply.code(404).type('text/markdown; charset=utf-8').send(notFoundMarkdown(deps, path));
  });
}
