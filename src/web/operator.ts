import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/context.js';
import { registerConsoleRoutes } from './operator/routes.js';

/** The operator console at /operator (docs/operator.md). */
export async function registerOperatorConsole(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  await registerConsoleRoutes(app, deps);
}
