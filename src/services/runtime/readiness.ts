import { AppError } from '../../domain/errors.js';
import type { Readiness } from '../../domain/tasks/schemas.js';
import { iso } from '../../domain/time.js';
import { pendingMigrations } from '../../store/db.js';
import type { ServiceDeps } from '../context.js';
import { storeFailure } from './health.js';

/** The background workers an instance runs (src/background.ts); readiness needs them all. */
export const EXPECTED_WORKERS = ['mail', 'webhooks', 'retention'] as const;

/** Which background workers run in this process; background.ts reports starts and stops here. */
export class WorkerStatus {
  private readonly running = new Set<string>();
  started(name: string): void {
    this.running.add(name);
  }
  stopped(name: string): void {
    this.running.delete(name);
  }
  isRunning(name: string): boolean {
    return this.running.has(name);
  }
}

/**
 * Readiness for orchestrators (GET /api/v1/health/ready): the store answers a read and takes a
 * write (the health record's probe: an instance on a full disk refuses every submission, so it must
 * not be sent any), every migration this code knows is applied, and the background workers run.
 * 503 `service_unavailable` naming each failing check otherwise. Liveness stays GET /api/v1/health.
 */
export async function readiness(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log' | 'metrics' | 'workers' | 'timestamps'>): Promise<Readiness> {
  const failures: string[] = [];
  try {
    await deps.store.ping();
    const pending = await pendingMigrations(deps.store);
    if (pending.length > 0) failures.push(`migrations: ${pending.length} not applied (${pending.join(', ')})`);
    const writes = await storeFailure(deps);
    if (writes !== undefined) failures.push(`store: writes fail (${writes})`);
  } catch (error) {
    deps.metrics.storeErrors.inc();
    deps.log.error({ err: error }, 'readiness: store unavailable');
    failures.push('store: not answering');
  }
  for (const worker of EXPECTED_WORKERS) {
    if (!deps.workers.isRunning(worker)) failures.push(`workers: ${worker} is not running`);
  }
  if (failures.length > 0) {
    throw new AppError('service_unavailable', 'Not ready to serve; see details.', { details: failures }, { 'Retry-After': '5' });
  }
  const ready: Readiness = { status: 'ready', checks: { store: 'ok', migrations: 'ok', workers: 'ok' }, time: iso(deps.clock.now()) };
  // A TSA fault delays the receipt log's time-stamps only: said here, never a reason to be unready.
  if (deps.timestamps.enabled) ready.checks.timestamps = deps.timestamps.failure === undefined ? 'ok' : `failing: ${deps.timestamps.failure}`;
  return ready;
}
