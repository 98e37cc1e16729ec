import { dailyCapUsage } from '../../abuse/quotas.js';
import { COVERAGE_MIN_SAMPLES, type Coverage, type CoverageMeasure, type CoverageTime, quantile, windowFirstDay } from '../../domain/tasks/coverage.js';
import { OPEN_STATUSES, TASK_TYPES } from '../../domain/tasks/task.js';
import { iso } from '../../domain/time.js';
import { type CoverageHistogram, coverageWindow, rollCoverageWindow } from '../../store/tasks/coverage-repo.js';
import { countTasksByStatus } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { onDutyCount } from '../team/operators.js';

/**
 * The window's first day each instance (its store) last rolled the window to. Looking for days
 * older than that walks the day index from its start, past every entry a roll deleted and VACUUM
 * has not reclaimed yet (500 ms at 1,000,000 tasks after a big roll, docs/performance.md), so an
 * instance looks once per UTC day, not on every read.
 */
const rolledTo = new WeakMap<object, string>();

/**
 * GET /api/v1/coverage, get_human_services and the console's service level (docs/coverage.md):
 * the window's histograms (a bounded number of rows, kept with every change of a task), the
 * daily cap, the operators on duty and the open tasks (kept counts). Read from the store on every
 * call, so every instance answers the same figures the moment a task moves.
 */
export async function coverage(deps: ServiceDeps): Promise<Coverage> {
  const now = deps.clock.now();
  const db = deps.store.db;
  const firstDay = windowFirstDay(now);
  if (rolledTo.get(deps.store) !== firstDay) {
    await rollCoverageWindow(db, firstDay);
    rolledTo.set(deps.store, firstDay);
  }
  const [rows, caps, onDuty, byStatus] = await Promise.all([coverageWindow(db), dailyCapUsage(deps), onDutyCount(deps), countTasksByStatus(db)]);
  const summaries = new Map(rows.map((row) => [`${row.task_type}|${row.measure}`, row]));
  const summaryOf = (taskType: string, measure: CoverageMeasure): CoverageHistogram | undefined => summaries.get(`${taskType}|${measure}`);
  const accepting = caps.tasks.remaining > 0;
  const refused = new Set(deps.profile.rejected_task_types);
  return {
    accepting,
    operators_on_duty: onDuty,
    open_tasks: OPEN_STATUSES.reduce((sum, status) => sum + (byStatus[status] ?? 0), 0),
    response_target_hours: deps.profile.response_target_hours,
    by_type: TASK_TYPES.map((taskType) => {
      const accepted = summaryOf(taskType, 'accept')?.total ?? 0;
      const rejected = summaryOf(taskType, 'rejected')?.total ?? 0;
      return {
        task_type: taskType,
        accepting: accepting && !refused.has(taskType),
        delivered_30d: summaryOf(taskType, 'deliver')?.total ?? 0,
        acceptance_rate_30d: accepted + rejected === 0 ? null : Math.round((accepted / (accepted + rejected)) * 1000) / 1000,
        time_to_seen: timeOf(summaryOf(taskType, 'seen')),
        time_to_accept: timeOf(summaryOf(taskType, 'accept')),
        time_to_deliver: timeOf(summaryOf(taskType, 'deliver')),
      };
    }),
    updated_at: iso(now),
  };
}

function timeOf(histogram: CoverageHistogram | undefined): CoverageTime {
  if (histogram === undefined || histogram.total < COVERAGE_MIN_SAMPLES) return null;
  return { p50_seconds: Math.round(quantile(histogram.buckets, 0.5) ?? 0), p90_seconds: Math.round(quantile(histogram.buckets, 0.9) ?? 0) };
}
