import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ServiceDeps } from '../services/context.js';
import { isStoreFault } from '../store/faults.js';
import { requireAdmin } from './admin-auth.js';

/** The route label of requests no route matched: raw paths never become labels (they hold task ids). */
export const UNMATCHED_ROUTE = '<unmatched>';

/** Counts one answered request in the request metrics. */
export type CountResponse = (method: string, route: string, status: number, seconds: number) => void;

/**
 * Request metrics on every route (by route template, never the raw path) and store faults seen by
 * the HTTP layer. Installed on the root instance before the routes, so its hooks see every request.
 * Returns the counting function, for requests answered outside the framework (fast-reads.ts).
 */
export function installMetricsHooks(app: FastifyInstance, deps: Pick<ServiceDeps, 'metrics' | 'adminKeyHash'>): CountResponse {
  const { metrics } = deps;
  // prom-client checks and hashes a label set on every call: the series of each method, route
  // and status are looked up once and kept (a bounded set: routes and status codes are few).
  const series = new Map<string, { count: { inc(): void }; duration: { observe(seconds: number): void } }>();
  const countResponse: CountResponse = (method, route, status, seconds) => {
    const key = `${method} ${status} ${route}`;
    let found = series.get(key);
    if (found === undefined) {
      const labels = { method, route, status: String(status) };
      found = { count: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
      series.set(key, found);
    }
    found.count.inc();
    found.duration.observe(seconds);
  };
  // Callback-style: an async hook costs a promise on every request.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    countResponse(request.method, request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE), reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.addHook('onError', async (_request, _reply, error) => {
    if (isStoreFault(error)) metrics.storeErrors.inc();
  });
  return countResponse;
}

/** `GET /metrics`, registered with the other routes (after CORS and the abuse hooks). */
export function registerMetricsRoute(app: FastifyInstance, deps: ServiceDeps): void {
  const { metrics } = deps;
  app.get(
    '/metrics',
    {
      onRequest: [requireAdmin(deps)],
      config: { kind: 'admin', role: 'admin' },
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
