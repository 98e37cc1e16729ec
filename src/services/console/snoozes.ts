import { AppError, validationFailed } from '../../domain/errors.js';
import type { AdminTask } from '../../domain/tasks/admin-schemas.js';
import { isFinal, type TaskStatus } from '../../domain/tasks/task.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso, parseDateTime } from '../../domain/time.js';
import { activeSnoozes, deleteSnooze, putSnooze, snoozeOf } from '../../store/console/snoozes-repo.js';
import { withTransaction } from '../../store/db.js';
import { findTask, findTasks } from '../../store/tasks/tasks-repo.js';
import { assigneesOf } from '../../store/team/assignments-repo.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';
import { toAdminTask } from './reads.js';

/**
 * Snooze (docs/inbox.md): an open task hidden from the console's default inbox until a time; it comes
 * back by itself when the time passes (the queue compares with the clock, nothing to sweep). The
 * snooze and its audit row commit together. Console only: the contract has no REST name for it.
 */

/** A snooze lasts at most this long: a task is not to be forgotten. */
const MAX_SNOOZE_DAYS = 30;

/**
 * Snoozes a task until a time, or for a number of hours from now (the console's chips). Hours are
 * bounded here, before any date is made of them: 1e308 hours is no date at all (toISOString throws).
 */
export async function snoozeTask(deps: ServiceDeps, actor: Actor, taskId: string, when: { until: string } | { hours: number }): Promise<string> {
  const now = deps.clock.now();
  if ('hours' in when && !(Number.isFinite(when.hours) && when.hours > 0 && when.hours <= MAX_SNOOZE_DAYS * 24))
    throw validationFailed([`hours must be more than 0 and at most ${MAX_SNOOZE_DAYS * 24}`]);
  const until = 'hours' in when ? new Date(now.getTime() + when.hours * 3_600_000) : parseDateTime(when.until);
  if (!until) throw validationFailed(['until must be a date and time']);
  if (until.getTime() <= now.getTime()) throw validationFailed(['until must be in the future']);
  if (until.getTime() > now.getTime() + MAX_SNOOZE_DAYS * 86_400_000) throw validationFailed([`until must be within ${MAX_SNOOZE_DAYS} days`]);
  await withTransaction(deps.store.db, async (trx) => {
    const task = await findTask(trx, taskId);
    if (!task) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
    if (isFinal(task.status as TaskStatus))
      throw new AppError('invalid_transition', `The task is ${task.status}: only an open task can be snoozed.`, { from: task.status, to: task.status });
    await putSnooze(trx, { task_id: taskId, until: iso(until), created_at: iso(now) });
    await recordAudit(trx, deps, { actor, action: 'task.snoozed', taskId, details: { until: iso(until) } });
    await deps.changes.publish({ kind: 'task', taskId }, trx);
  });
  return iso(until);
}

/** Ends a snooze now; false when the task was not snoozed. */
export async function wakeTask(deps: ServiceDeps, actor: Actor, taskId: string): Promise<boolean> {
  return withTransaction(deps.store.db, async (trx) => {
    const removed = await deleteSnooze(trx, taskId);
    if (removed) {
      await recordAudit(trx, deps, { actor, action: 'task.unsnoozed', taskId });
      await deps.changes.publish({ kind: 'task', taskId }, trx);
    }
    return removed;
  });
}

/** Until when a task is snoozed, if it is now. */
export async function snoozedUntil(deps: ServiceDeps, taskId: string): Promise<string | undefined> {
  return (await snoozeOf(deps.store.db, taskId, iso(deps.clock.now())))?.until;
}

/** The snoozed open tasks, the soonest to come back first, with their wake-up time (at most `limit`). */
export async function listSnoozed(deps: ServiceDeps, limit = 50): Promise<{ task: AdminTask; until: string }[]> {
  const snoozes = await activeSnoozes(deps.store.db, iso(deps.clock.now()), limit);
  const rows = await findTasks(
    deps.store.db,
    snoozes.map((s) => s.task_id),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const assignees = await assigneesOf(
    deps.store.db,
    rows.map((row) => row.id),
  );
  return snoozes.flatMap((s) => {
    const row = byId.get(s.task_id);
    return row && !isFinal(row.status as TaskStatus) ? [{ task: toAdminTask(row, assignees.get(row.id) ?? null), until: s.until }] : [];
  });
}
