import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../services/deps.js';

/** The MCP tool server at /mcp (issue 6). Foundation stub. */
export async function registerMcp(_app: FastifyInstance, _deps: ServiceDeps): Promise<void> {}
