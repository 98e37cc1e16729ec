import { A2AError } from '../domain/a2a/errors.js';
import type { ServiceDeps } from '../services/context.js';

/**
 * The push notification config methods. This release answers them with UnsupportedOperationError:
 * the task's changes reach a callback_url as webhooks.
 */
const unsupported = (what: string) => async (): Promise<never> => {
  throw new A2AError('UnsupportedOperation', `${what} is not available on this agent yet.`);
};

export const pushConfigMethods: {
  create: (deps: ServiceDeps, params: Record<string, unknown>) => Promise<unknown>;
  get: (deps: ServiceDeps, params: Record<string, unknown>) => Promise<unknown>;
  list: (deps: ServiceDeps, params: Record<string, unknown>) => Promise<unknown>;
  remove: (deps: ServiceDeps, params: Record<string, unknown>) => Promise<unknown>;
  fromSendConfiguration: (deps: ServiceDeps, taskId: string, config: unknown) => Promise<void>;
} = {
  create: unsupported('Push notifications'),
  get: unsupported('Push notifications'),
  list: unsupported('Push notifications'),
  remove: unsupported('Push notifications'),
  fromSendConfiguration: unsupported('Push notifications'),
};
