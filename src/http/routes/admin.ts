import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../services/deps.js';

/** The operator's admin API (issue 4). Foundation stub. */
export async function registerAdminRoutes(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
