import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ServiceDeps } from '../services/context.js';
import { isStoreFault } from '../store/faults.js';
import { requireAdmin } from './admin-auth.js';

/** The route label of requests no route matched: raw paths never become labels (they hold task ids). */
export const UNMATCHED_ROUTE = '<unmatched>';

/**
 * Request metrics on every route (by route template, never the raw path) and store faults seen by
 * the HTTP layer. Installed on the root instance before the routes, so its hooks see every request.
 */
export function installMetricsHooks(app: FastifyInstance, deps: Pick<ServiceDeps, 'metrics' | 'adminKeyHash'>): void {
  const { metrics } = deps;
  // Callback-style: an async hook costs a promise on every request.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  app.addHook('onError', async (_request, _reply, error) => {
    if (isStoreFault(error)) metrics.storeErrors.inc();
  });
}

/** `GET /metrics`, registered with the other routes (after CORS and the abuse hooks). */
export function registerMetricsRoute(app: FastifyInstance, deps: ServiceDeps): void {
  const { metrics } = deps;
  app.get(
    '/metrics',
    {
      onRequest: [requireAdmin(deps)],
      config: { kind: 'admin' },
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics (text exposition format); needs the operator key',
        tags: ['admin'],
        produces: ['text/plain'],
        response: { 200: { description: 'Prometheus text format 0.0.4', type: 'string' } },
      },
    },
    async (_request, reply) => {
      const body = await metrics.render();
      return reply.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(body);
    },
  );
}
