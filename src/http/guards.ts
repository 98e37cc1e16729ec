import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError } from '../domain/errors.js';
import { bodyGuardError } from '../domain/tasks/body-guard.js';
import type { RequestStep } from './pipeline.js';

/**
 * Checks every request gets before any route: its id, a NUL byte in the URL, and (on every route
 * that takes a body) the body guards.
 */

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const CHARSETS = /;\s*charset\s*=\s*"?([^";\s]*)/gi;
/** The bodies this service parses as text (JSON and forms); uploads keep whatever charset they declare. */
const TEXT_BODY = /^\s*application\/(?:[\w.+-]*\+)?json|^\s*application\/x-www-form-urlencoded/i;

/** A caller's X-Request-Id when it is a plain token, so it can quote it back; otherwise a UUID. */
export function requestIdFor(request: { headers: FastifyRequest['headers'] }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The guards every request gets when it arrives, a step of the request pipeline (pipeline.ts):
 * its id echoed, a 503 while draining, a NUL byte in the URL, a body in a charset other than UTF-8.
 * `draining` tells whether the server is closing (the status read's fast lane then stands aside).
 */
export function requestGuards(app: FastifyInstance): { step: RequestStep; draining: () => boolean } {
  // Echo the request id so a client can quote it; the log carries the same id. A NUL byte in the
  // URL is never meaningful, and PostgreSQL cannot even compare text holding one: refuse it here.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const step: RequestStep = (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      // Draining for shutdown: send the client elsewhere (a load balancer retries another instance).
      reply.header('connection', 'close');
      return new AppError('service_unavailable', 'The service is restarting; try again shortly.', {}, { 'Retry-After': '5' });
    }
    if (request.url.includes('%00')) {
      return new AppError('malformed_request', 'The URL contains a NUL character.', { details: ['the path and query must not contain %00'] });
    }
    // Bodies are read as UTF-8: one declared in another charset would be silently misread. Refuse it.
    const type = request.headers['content-type'];
    // Every charset parameter is looked at: `charset=utf-8; charset=latin1` names two, and another
    // reader of the header may pick the second.
    const charsets = type === undefined || !TEXT_BODY.test(type) ? [] : [...type.matchAll(CHARSETS)].map((m) => m[1] ?? '');
    const other = charsets.find((c) => !/^utf-?8$/i.test(c));
    if (other !== undefined || charsets.length > 1) {
      return new AppError('unsupported_media_type', 'Send the body as UTF-8 (charset=utf-8 or no charset).', {
        details: [other !== undefined ? `charset ${other.slice(0, 40)} is not accepted` : 'charset must be given at most once'],
      });
    }
    return undefined;
  };
  return { step, draining: () => closing };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How the route answers a body the guards refuse, when its callers expect another envelope
     * than the contract's error body (JSON-RPC on /mcp); the contract's error otherwise.
     */
    bodyRefusal?: (refusal: AppError) => { status: number; body: unknown };
  }
}

/**
 * The body guards (domain/tasks/body-guard.ts: nesting, numbers JSON cannot hold, NUL, unpaired
 * surrogates) run on every route that takes a body, whatever the door — the API, MCP, the web
 * form and the console — before the route or any schema sees it.
 */
export function installBodyGuards(app: FastifyInstance): void {
  const checkBody: preValidationHookHandler = (request, reply, done) => {
    const refusal = bodyGuardError(request.body);
    if (!refusal) return done();
    // A route that speaks another protocol (MCP's JSON-RPC) answers the refusal in it.
    const own = request.routeOptions.config.bodyRefusal?.(refusal);
    if (own) return void reply.code(own.status).send(own.body);
    return done(refusal);
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT')) return;
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [checkBody] : [checkBody, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
