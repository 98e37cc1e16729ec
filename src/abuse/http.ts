import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** Abuse control (issue 3) Foundation stub. */
export async function registerAbuseHooks(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
