import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** OpenAPI generation (issue 7); registered before any route so it sees them all. Foundation stub. */
export async function registerOpenApi(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
