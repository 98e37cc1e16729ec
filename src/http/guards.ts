import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError, validationFailed } from '../domain/errors.js';

/**
 * Checks every request gets before any route: its id, a NUL byte in the URL, and (on API routes
 * that take a body) NUL characters and absurd nesting in the body. Hooks that run on every request
 * are callback-style: an async hook costs a promise per request.
 */

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

/** A caller's X-Request-Id when it is a plain token, so it can quote it back; otherwise a UUID. */
export function requestIdFor(request: { headers: FastifyRequest['headers'] }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

export function installRequestGuards(app: FastifyInstance): void {
  // Echo the request id so a client can quote it; the log carries the same id. A NUL byte in the
  // URL is never meaningful, and PostgreSQL cannot even compare text holding one: refuse it here.
  // (Hooks on every request are callback-style: an async hook costs a promise per request.)
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (closing) {
      // Draining for shutdown: send the client elsewhere (a load balancer retries another instance).
      reply.header('Connection', 'close');
      done(new AppError('service_unavailable', 'The service is restarting; try again shortly.', {}, { 'Retry-After': '5' }));
      return;
    }
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
}
