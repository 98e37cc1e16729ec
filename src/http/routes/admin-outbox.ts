import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../services/deps.js';

/** The outbox admin endpoints (issue 5). Foundation stub. */
export async function registerOutboxRoutes(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
