import { AppError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import type { Caller, ServiceDeps } from '../services/deps.js';
import type { Db } from '../store/db.js';

/**
 * Duplicate detection (contract): the same client or the same contact e-mail, the same task_type
 * and the same description (trimmed, whitespace collapsed, case folded — tasks.dedupe_key) within
 * DUPLICATE_WINDOW_HOURS is 409 `duplicate_task` with `existing_task_id`. Runs inside the
 * submission transaction under the dedupe key's lock (PostgreSQL), so two identical submissions
 * racing on two instances give one 202 and one 409.
 */
export async function findDuplicate(db: Db, deps: ServiceDeps, caller: Caller, contactEmail: string | undefined, dedupeKey: string): Promise<string | null> {
  const hours = deps.config.limits.duplicateWindowHours;
  if (hours <= 0) return null;
  const since = iso(new Date(deps.clock.now().getTime() - hours * 3_600_000));
  // Look up by the dedupe key alone (its index is selective: identical descriptions are rare) and
  // match the client or e-mail here. Given the OR, a planner may otherwise pick the client index
  // and scan every task that client sent in the window.
  const rows = await db
    .selectFrom('tasks')
    .select(['id', 'client_hash', 'contact_email'])
    .where('dedupe_key', '=', dedupeKey)
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .execute();
  const email = contactEmail?.toLowerCase();
  const row = rows.find((r) => r.client_hash === caller.clientHash || (email !== undefined && r.contact_email?.toLowerCase() === email));
  return row?.id ?? null;
}

export function duplicateTask(existingTaskId: string, windowHours: number): AppError {
  return new AppError(
    'duplicate_task',
    `The same task was already submitted within the last ${windowHours} hours. Poll the existing task (existing_task_id) instead of submitting it again.`,
    { existing_task_id: existingTaskId },
  );
}
