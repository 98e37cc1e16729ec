import { iso } from '../../domain/time.js';
import { firstViewTimes } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';

/**
 * The response target (contract "Operator alerts"): a task should be seen by the operator within
 * RESPONSE_TARGET_HOURS. The queue flags the tasks that were not; the discovery documents publish
 * the measured share that were, so an agent can judge the promise by the record.
 */

export interface SeenWithinTarget {
  target_hours: number;
  window_days: number;
  /** on_time / due, rounded to three decimals; null when no task was due yet. */
  share: number | null;
  on_time: number;
  /** Tasks whose target has passed or that were already seen (a young unseen task is not a miss yet). */
  due: number;
}

/** True when a waiting task has gone unseen for longer than the target. */
export function unseenPastTarget(task: { status: string; created_at: string; seen_by_operator_at: string | null }, targetHours: number, now: Date): boolean {
  return task.status === 'submitted' && task.seen_by_operator_at === null && now.getTime() - Date.parse(task.created_at) > targetHours * 3_600_000;
}

/** The share over the most recent RECENT_SAMPLE tasks created in the last `days` (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28: bounded). */
export async function seenWithinTarget(deps: ServiceDeps, days = 30): Promise<SeenWithinTarget> {
  const target = deps.profile.response_target_hours;
  const now = deps.clock.now().getTime();
  const targetMs = target * 3_600_000;
  const rows = await firstViewTimes(deps.store.db, iso(new Date(now - days * 86_400_000)));
  let due = 0;
  let onTime = 0;
  for (const row of rows) {
    const created = Date.parse(row.created_at);
    const seen = row.seen_by_operator_at === null ? null : Date.parse(row.seen_by_operator_at);
    if (seen === null && now - created <= targetMs) continue;
    due += 1;
    if (seen !== null && seen - created <= targetMs) onTime += 1;
  }
  return { target_hours: target, window_days: days, share: due === 0 ? null : Math.round((onTime / due) * 1000) / 1000, on_time: onTime, due };
}
