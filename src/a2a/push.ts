import { validationFailed } from '../domain/errors.js';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from '../services/a2a/push-configs.js';
import type { ServiceDeps } from '../services/context.js';

/**
 * The four push notification config methods, and the config a SendMessage may carry, over the
 * service functions of services/a2a/push-configs.ts. The params are A2A's: `taskId` (from the
 * HTTP+JSON path, or the JSON-RPC params) and, for one config, its `id`.
 */

function field(params: Record<string, unknown>, name: 'taskId' | 'id'): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '' || value.length > 200) {
    throw validationFailed(
      [`${name}: required, ${name === 'taskId' ? 'a task id' : 'a push notification config id'}`],
      'The A2A request has invalid fields; see details.',
    );
  }
  return value;
}

export const pushConfigMethods = {
  create: (deps: ServiceDeps, params: Record<string, unknown>) => createPushConfig(deps, field(params, 'taskId'), params),
  get: (deps: ServiceDeps, params: Record<string, unknown>) => getPushConfig(deps, field(params, 'taskId'), field(params, 'id')),
  list: (deps: ServiceDeps, params: Record<string, unknown>) => listPushConfigs(deps, field(params, 'taskId')),
  /** google.protobuf.Empty: `{}` over JSON-RPC (the HTTP+JSON route answers 204). */
  remove: async (deps: ServiceDeps, params: Record<string, unknown>) => {
    await deletePushConfig(deps, field(params, 'taskId'), field(params, 'id'));
    return {};
  },
  /** SendMessage's configuration.taskPushNotificationConfig, for the task the message created or continued. */
  fromSendConfiguration: async (deps: ServiceDeps, taskId: string, config: unknown): Promise<void> => {
    await createPushConfig(deps, taskId, config);
  },
};
