import { AppError } from '../../domain/errors.js';
import type { Health } from '../../domain/tasks/schemas.js';
import { iso } from '../../domain/time.js';
import { STORE_RETRY_AFTER_SECONDS, storeFaultReason } from '../../store/faults.js';
import { API_VERSION, SERVICE_NAME } from '../../version.js';
import type { ServiceDeps } from '../context.js';

/** A write probe at most this often: health is polled by load balancers and must stay cheap. */
const PROBE_INTERVAL_MS = 2000;

/**
 * 200 when the store answers a read and takes a write; 503 service_unavailable (with the fault's
 * name, e.g. SQLITE_FULL, and Retry-After) when it does not, or when a request met a store fault
 * in the last seconds. A store that recovers is healthy again at the next probe.
 */
export async function health(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log'>): Promise<Health> {
  const failure = await storeFailure(deps);
  if (failure !== undefined) {
    throw new AppError(
      'service_unavailable',
      `The store is failing (${failure}); try again shortly.`,
      { details: [`store: ${failure}`], retry_after_seconds: STORE_RETRY_AFTER_SECONDS },
      { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) },
    );
  }
  return { status: 'ok', service: SERVICE_NAME, api_version: API_VERSION, time: iso(deps.clock.now()) };
}

/**
 * Why the store cannot serve (it does not answer a read or refuses a write: "SQLITE_FULL",
 * "ECONNREFUSED", …; or a request met such a fault since the last good probe), or undefined when
 * it can. Health and readiness share this probe and its memo, so neither costs a write per request
 * and both change state together.
 */
export async function storeFailure(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log'>): Promise<string | undefined> {
  return (await probe(deps)) ?? deps.store.faults.recent();
}

async function probe(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log'>): Promise<string | undefined> {
  const memo = deps.store.faults.lastProbe;
  const started = Date.now();
  if (memo && started - memo.at < PROBE_INTERVAL_MS) return memo.failure;
  let failure: string | undefined;
  try {
    await deps.store.ping();
    await deps.store.probeWrite(iso(deps.clock.now()));
    deps.store.faults.clear(started);
  } catch (error) {
    failure = storeFaultReason(error) ?? 'store error';
    deps.store.faults.record(failure);
    deps.log.error({ err: error }, 'health check: store unavailable');
  }
  deps.store.faults.lastProbe = { at: Date.now(), failure };
  return failure;
}
