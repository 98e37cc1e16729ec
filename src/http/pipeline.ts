import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../domain/errors.js';

/**
 * The checks and headers every request gets, run as one Fastify hook per phase instead of one
 * hook per concern: each Fastify hook costs a hook-runner turn (closures, a `next`, a try/catch)
 * per request, and a status read used to go through seven of them (docs/performance.md). The
 * concerns stay in their own modules (guards.ts, connections.ts, abuse-hooks.ts, caching.ts);
 * each contributes a step, and app.ts lists the steps in the order they must run.
 *
 * Installed on the root instance before any route, so every request runs them, including 404s,
 * CORS preflights and requests refused before routing. Header names are written in lower case:
 * Fastify lowercases every name it is given, and a name that is already lower case costs no copy.
 */

/**
 * Runs when a request arrives, before its route's own hooks. Returns the refusal to answer with
 * (the error handler sends it, with the headers set so far), or nothing to go on.
 */
export type RequestStep = (request: FastifyRequest, reply: FastifyReply, route: FastifyContextConfig) => AppError | undefined;

/** Runs on every response before it is sent (errors and 404s included); sets headers only. */
export type ResponseStep = (request: FastifyRequest, reply: FastifyReply) => void;

const NO_CONFIG: FastifyContextConfig = {};

export function installPipeline(app: FastifyInstance, steps: { request: RequestStep[]; response: ResponseStep[] }): void {
  const requestSteps = [...steps.request];
  const responseSteps = [...steps.response];
  // Callback-style: an async hook costs a promise on every request.
  app.addHook('onRequest', (request, reply, done) => {
    // routeOptions is rebuilt on every access: read the route's config once (none for a 404).
    const route = request.routeOptions.config ?? NO_CONFIG;
    for (const step of requestSteps) {
      const refusal = step(request, reply, route);
      if (refusal !== undefined) return done(refusal);
    }
    return done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    for (const step of responseSteps) step(request, reply);
    done(null, payload);
  });
}
