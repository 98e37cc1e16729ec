import { AppError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import type { Caller, AbuseDeps } from './context.js';
import type { Db } from '../store/db.js';
import { findByDedupeKey } from '../store/tasks-repo.js';

/**
 * Duplicate detection (contract): the same client or the same contact e-mail, the same task_type
 * and the same description (trimmed, whitespace collapsed, case folded — tasks.dedupe_key) within
 * DUPLICATE_WINDOW_HOURS is 409 `duplicate_task` with `existing_task_id`. Runs inside the
 * submission transaction under the dedupe key's lock (PostgreSQL), so two identical submissions
 * racing on two instances give one 202 and one 409.
 */
export async function findDuplicate(db: Db, deps: AbuseDeps, caller: Caller, contactEmail: string | undefined, dedupeKey: string): Promise<string | null> {
  const hours = deps.config.limits.duplicateWindowHours;
  if (hours <= 0) return null;
  const since = iso(new Date(deps.clock.now().getTime() - hours * 3_600_000));
  const rows = await findByDedupeKey(db, dedupeKey, since);
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
