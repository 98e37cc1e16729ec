import { AppError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import type { DedupeMatch } from '../store/tasks/tasks-repo.js';
import type { AbuseDeps, Caller } from './context.js';

/**
 * Duplicate detection (contract): the same client or the same contact e-mail, the same task_type
 * and the same description (trimmed, whitespace collapsed, case folded — tasks.dedupe_key) within
 * DUPLICATE_WINDOW_HOURS is 409 `duplicate_task`. Runs inside the submission transaction under
 * the dedupe key's lock (PostgreSQL), so two identical submissions racing on two instances give
 * one 202 and one 409.
 *
 * Contract, "Duplicates across clients": the task id is the key to the task, so only the client
 * that sent it gets `existing_task_id`. A match by contact e-mail alone (another client) gets the
 * 409 without it; the id is mailed to that contact address instead (the caller queues the mail).
 */
export interface Duplicate {
  taskId: string;
  /** The same client sent it: it may be told the id. */
  sameClient: boolean;
  /** The existing task's contact address (where a cross-client match sends the id). */
  contactEmail: string | null;
}

/** The start of the duplicate window, or null when duplicate detection is off. */
export function duplicateWindowStart(deps: AbuseDeps, now: Date): string | null {
  const hours = deps.config.limits.duplicateWindowHours;
  return hours <= 0 ? null : iso(new Date(now.getTime() - hours * 3_600_000));
}

/**
 * Among the recent tasks with the submission's dedupe key (newest first), the one it duplicates:
 * the caller's own task first (then it may be told the id even if another client's also
 * matches), else one for the same contact e-mail.
 */
export function pickDuplicate(
  candidates: Pick<DedupeMatch, 'id' | 'client_hash' | 'contact_email'>[],
  caller: Caller,
  contactEmail: string | undefined,
): Duplicate | null {
  const own = candidates.find((r) => r.client_hash === caller.clientHash);
  if (own) return { taskId: own.id, sameClient: true, contactEmail: own.contact_email };
  const email = contactEmail?.toLowerCase();
  const other = email === undefined ? undefined : candidates.find((r) => r.contact_email?.toLowerCase() === email);
  return other ? { taskId: other.id, sameClient: false, contactEmail: other.contact_email } : null;
}

export function duplicateTask(duplicate: Duplicate, windowHours: number): AppError {
  if (!duplicate.sameClient) {
    return new AppError(
      'duplicate_task',
      `The same task was already submitted within the last ${windowHours} hours for this contact e-mail. Its task id was sent by e-mail to that contact address; poll that task instead of submitting it again.`,
    );
  }
  return new AppError(
    'duplicate_task',
    `The same task was already submitted within the last ${windowHours} hours. Poll the existing task (existing_task_id) instead of submitting it again.`,
    { existing_task_id: duplicate.taskId },
  );
}
