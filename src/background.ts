import type { ServiceDeps } from './services/deps.js';

export interface Background {
  stop(): Promise<void>;
}

/**
 * Long-running work beside the HTTP server (the mail outbox worker, housekeeping of expired
 * counters). Started by server.ts after listening; tests start it when they need it.
 */
export async function startBackground(_deps: ServiceDeps): Promise<Background> {
  return { stop: async () => undefined };
}
