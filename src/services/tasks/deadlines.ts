import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { type Db, withExclusiveLock, withTransaction } from '../../store/db.js';
import { markDeadlinePassed, type TaskRow, tasksPastDeadline, updateTaskIfStatus } from '../../store/tasks/tasks-repo.js';
import { planPatch } from '../console/transitions.js';
import type { ServiceDeps } from '../context.js';
import { enqueueTaskEvent } from '../delivery/webhooks.js';
import { startPeriodic } from '../runtime/periodic.js';

/**
 * Deadlines kept honestly (contract, "Additions, part 2"). A sweep, every
 * DEADLINE_SWEEP_INTERVAL_MS and once at start (so a deadline that passed while the service was
 * down is handled then), finds open tasks whose deadline passed:
 * - a task still `submitted` is rejected with DEADLINE_REASON through the operator's own
 *   transition rules (same mail, webhook, change-feed events as any rejection), unless
 *   DEADLINE_AUTO_REJECT=false. The update is conditional on the status still being `submitted`
 *   and commits with its events, so a task accepted meanwhile is never rejected;
 * - an `accepted` task stays accepted; the operator is alerted (push through the change feed, mail)
 *   and `task.deadline_passed` is sent, once: deadline_passed_at is stamped by a conditional update.
 * One instance sweeps at a time (an advisory lock on PostgreSQL); the conditional updates make a
 * second sweeper harmless anyway.
 */

export const DEADLINE_REASON = 'The deadline passed before the task could be accepted.';
const BATCH = 100;
const LOCK_KEY = 'deadline-sweep';

type SweepDeps = ServiceDeps;

export interface SweepResult {
  rejected: number;
  announced: number;
}

/** Rejects a task the sweep found still submitted; false when it was accepted (or rejected) meanwhile. */
export async function rejectPastDeadline(deps: SweepDeps, db: Db, found: TaskRow): Promise<boolean> {
  const now = deps.clock.now();
  const { seen_by_operator_at: _notSeenByAnyone, ...changes } = planPatch(found, { status: 'rejected', operator_notes: DEADLINE_REASON }, now);
  return withTransaction(db, async (trx) => {
    if (!(await updateTaskIfStatus(trx, found.id, 'submitted', changes))) return false;
    const next: TaskRow = { ...found, ...changes };
    await outbox.enqueueTaskTransition(trx, deps, next);
    await enqueueTaskEvent(trx, deps, next);
    await deps.changes.publish({ kind: 'task', taskId: found.id }, trx);
    return true;
  });
}

/** Announces an accepted task's passed deadline, once; false when it was announced (or left accepted) meanwhile. */
export async function announcePastDeadline(deps: SweepDeps, db: Db, found: TaskRow): Promise<boolean> {
  const at = iso(deps.clock.now());
  return withTransaction(db, async (trx) => {
    if (!(await markDeadlinePassed(trx, found.id, at))) return false;
    const next: TaskRow = { ...found, deadline_passed_at: at };
    await enqueueTaskEvent(trx, deps, next, 'task.deadline_passed');
    await outbox.enqueueDeadlinePassed(trx, deps, next);
    // The push announcer (services/alerts/push.ts) hears this and alerts the operator's devices.
    await deps.changes.publish({ kind: 'task', taskId: found.id }, trx);
    return true;
  });
}

/** One sweep; undefined when another instance is sweeping. */
export async function sweepDeadlines(deps: SweepDeps, options: { stopping?: () => boolean } = {}): Promise<SweepResult | undefined> {
  const stopping = options.stopping ?? (() => false);
  const statuses = deps.config.deadlines.autoReject ? ['submitted', 'accepted'] : ['accepted'];
  const locked = await withExclusiveLock(deps.store, LOCK_KEY, async (db) => {
    const result: SweepResult = { rejected: 0, announced: 0 };
    for (;;) {
      const due = await tasksPastDeadline(db, iso(deps.clock.now()), statuses, BATCH);
      let changed = 0;
      for (const task of due) {
        if (stopping()) return result;
        if (task.status === 'submitted' ? await rejectPastDeadline(deps, db, task) : await announcePastDeadline(deps, db, task)) {
          changed += 1;
          if (task.status === 'submitted') result.rejected += 1;
          else result.announced += 1;
          deps.log.info(
            { task_id: task.id, status: task.status },
            task.status === 'submitted' ? 'deadline passed: task rejected' : 'deadline passed: operator alerted',
          );
        }
      }
      // A short batch is the last; a batch where nothing changed (all raced away) is not repeated at once.
      if (due.length < BATCH || changed === 0) return result;
    }
  });
  return locked?.value;
}

/** Runs the sweep now and every DEADLINE_SWEEP_INTERVAL_MS; returns the stop function (waits for a sweep in flight). */
export function startDeadlineSweep(deps: SweepDeps): () => Promise<void> {
  return startPeriodic(deps, {
    name: 'deadline sweep',
    firstDelayMs: 0,
    intervalMs: deps.config.deadlines.sweepIntervalMs,
    run: (stopping) => sweepDeadlines(deps, { stopping }),
  });
}
