import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../services/deps.js';

/** The blocklist admin endpoints (issue 3). Foundation stub. */
export async function registerBlocklistRoutes(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
