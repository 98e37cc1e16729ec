import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { CoverageSchema } from '../../domain/tasks/coverage.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { coverage } from '../../services/tasks/coverage.js';

/** GET /api/v1/coverage (contract "Know before you ask"): public, a read; it takes no parameters (unknown ones are ignored, as everywhere). */
export function registerCoverageRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  server.withTypeProvider<TypeBoxTypeProvider>().get(
    '/api/v1/coverage',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getCoverage',
        summary: 'Will a task be taken, and how long will it take: live coverage per task type over the last 30 days',
        description:
          'Time to seen, to accepted and to delivered (p50/p90, from submission; null with fewer than 5 samples), acceptance rate and deliveries per task type, ' +
          'whether tasks are taken now, operators on duty and open tasks. Kept as tasks move: the same figures on every instance, at once.',
        tags: ['tasks'],
        querystring: Type.Object({}),
        response: { 200: CoverageSchema, 429: ErrorSchema, 503: ErrorSchema },
      },
    },
    async () => coverage(deps),
  );
}
