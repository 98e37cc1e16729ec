import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type preValidationHookHandler } from 'fastify';
import { registerAbuseHooks } from './abuse/http.js';
import { AppError, validationFailed } from './domain/errors.js';
import { registerDocuments } from './docs/routes.js';
import { registerOpenApi } from './docs/openapi.js';
import { installErrorHandler } from './http/errors.js';
import { installNotFound } from './http/not-found.js';
import { registerAdminRoutes } from './http/routes/admin.js';
import { registerBlocklistRoutes } from './http/routes/admin-blocklist.js';
import { registerOutboxRoutes } from './http/routes/admin-outbox.js';
import { registerPublicRoutes } from './http/routes/public.js';
import { validatorCompiler } from './http/validator.js';
import { registerMcp } from './mcp/routes.js';
import type { ServiceDeps } from './services/deps.js';
import { registerOperatorConsole } from './web/operator.js';
import { registerPages } from './web/pages.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Deeper bodies are refused: no field of the API nests beyond a few levels. */
const MAX_BODY_DEPTH = 32;

/**
 * Checks a parsed API body without recursion (a 64 KB body can nest thousands of levels): returns
 * the dotted paths of strings and keys holding a NUL character, or null when it nests too deeply.
 */
function fieldsWithNul(body: object): string[] | null {
  const found: string[] = [];
  const stack: [unknown, string, number][] = [[body, '', 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push(path || 'body');
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_BODY_DEPTH) return null;
      for (const [key, inner] of Object.entries(value)) {
        const here = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) found.push(here.replace(/\u0000/g, '\\0'));
        else stack.push([inner, here, depth + 1]);
      }
    }
  }
  return found.reverse();
}

const EXPOSED_HEADERS = ['Location', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Deprecation', 'Sunset', 'Link', 'Mcp-Session-Id'];

/**
 * Builds the whole application from its dependencies, with no side effects: no listening, no
 * timers, no store opening. Production (server.ts) and every test use this same function.
 */
export async function buildApp(deps: ServiceDeps): Promise<FastifyInstance> {
  // Typed as the default instance: the pino logger is passed in, the server is plain HTTP/1.1.
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.limits.maxBodyBytes,
    // TRUST_PROXY=N: the client is the address N hops back in X-Forwarded-For.
    trustProxy: (_address: string, hop: number) => hop < deps.config.trustProxy,
    // A caller's X-Request-Id is kept when it is a plain token, so it can quote it back; anything
    // else (long, or with characters a log or header should not carry) gets a fresh UUID.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler);
  // The API speaks JSON only: any other body is 415 (the web pages add their form parser in their own scope).
  app.removeContentTypeParser('text/plain');
  installErrorHandler(app);
  installNotFound(app, deps);

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'Idempotency-Key', 'Authorization', 'Accept', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID', 'X-Request-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86400,
    strictPreflight: false,
  });
  // Echo the request id so a client can quote it; the log carries the same id. A NUL byte in the
  // URL is never meaningful, and PostgreSQL cannot even compare text holding one: refuse it here.
  // (Hooks on every request are callback-style: an async hook costs a promise per request.)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (request.url.includes('%00')) {
      done(new AppError('malformed_request', 'The URL contains a NUL character.', { details: ['the path and query must not contain %00'] }));
      return;
    }
    done();
  });

  // PostgreSQL text cannot hold NUL, and no honest request needs one: refuse it in any API body
  // field with the contract's 422 before a route sees it; refuse absurdly deep bodies too. Only
  // routes that take a body get the check. (MCP reports refusals as tool results, and the task and
  // message fields it carries are checked by the shared validation.)
  const checkBody: preValidationHookHandler = (request, _reply, done) => {
    if (typeof request.body !== 'object' || request.body === null) return done();
    const fields = fieldsWithNul(request.body);
    if (fields === null) {
      return done(new AppError('malformed_request', 'The request body nests too deeply.', { details: [`body must not nest more than ${MAX_BODY_DEPTH} levels`] }));
    }
    if (fields.length > 0) return done(validationFailed(fields.map((field) => `${field} must not contain NUL characters`)));
    return done();
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.url.startsWith('/api/') || !methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT')) return;
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [checkBody] : [checkBody, ...(Array.isArray(existing) ? existing : [existing])];
  });

  await registerOpenApi(app, deps);
  registerAbuseHooks(app, deps);
  registerPublicRoutes(app, deps);
  await registerAdminRoutes(app, deps);
  await registerBlocklistRoutes(app, deps);
  await registerOutboxRoutes(app, deps);
  await registerMcp(app, deps);
  await registerDocuments(app, deps);
  await registerPages(app, deps);
  await registerOperatorConsole(app, deps);
  return app;
}
