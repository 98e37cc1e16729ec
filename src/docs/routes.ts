import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** Machine-readable documents (issue 7). Foundation stub. */
export async function registerDocuments(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
