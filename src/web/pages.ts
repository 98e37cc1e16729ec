import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** Human pages Foundation stub. */
export async function registerPages(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
