import { AppError } from '../domain/errors.js';
import type { Health } from '../domain/schemas.js';
import { iso } from '../domain/time.js';
import { API_VERSION, SERVICE_NAME } from '../version.js';
import type { ServiceDeps } from './context.js';

/** 200 when the store answers; 503 service_unavailable when it does not. */
export async function health(deps: ServiceDeps): Promise<Health> {
  try {
    await deps.store.ping();
  } catch (error) {
    deps.log.error({ err: error }, 'health check: store unavailable');
    throw new AppError('service_unavailable', 'The store is not answering; try again shortly.');
  }
  return { status: 'ok', service: SERVICE_NAME, api_version: API_VERSION, time: iso(deps.clock.now()) };
}
