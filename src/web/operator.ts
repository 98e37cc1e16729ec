import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** The operator console at /operator (issue 4). Foundation stub. */
export async function registerOperatorConsole(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
