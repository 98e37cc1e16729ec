import { dailyCapUsage } from '../abuse/quotas.js';
import { COVERAGE_MIN_SAMPLES, type Coverage, type CoverageMeasure, type CoverageTime, type Histogram, quantile, windowFirstDay } from '../domain/coverage.js';
import { OPEN_STATUSES, TASK_TYPES } from '../domain/task.js';
import { iso } from '../domain/time.js';
import { coverageWindow, rollCoverageWindow } from '../store/coverage-repo.js';
import { countTasksByStatus } from '../store/tasks-repo.js';
import type { ServiceDeps } from './context.js';
import { onDutyCount } from './operators.js';

/**
 * GET /api/v1/coverage, get_human_services and the console's service level (docs/coverage.md):
 * the window's histograms (a bounded number of rows, kept with every change of a task), the
 * daily cap, the operators on duty and the open tasks (kept counts). Read from the store on every
 * call, so every instance answers the same figures the moment a task moves.
 */
export async function coverage(deps: ServiceDeps): Promise<Coverage> {
  const now = deps.clock.now();
  const db = deps.store.db;
  await rollCoverageWindow(db, windowFirstDay(now));
  const [rows, caps, onDuty, byStatus] = await Promise.all([coverageWindow(db), dailyCapUsage(deps), onDutyCount(deps), countTasksByStatus(db)]);
  const histograms = new Map<string, Histogram>();
  for (const row of rows) {
    const key = `${row.task_type}|${row.measure}`;
    let histogram = histograms.get(key);
    if (!histogram) histograms.set(key, (histogram = new Map()));
    histogram.set(row.bucket, (histogram.get(row.bucket) ?? 0) + row.count);
  }
  const histogramOf = (taskType: string, measure: CoverageMeasure): Histogram => histograms.get(`${taskType}|${measure}`) ?? new Map();
  const accepting = caps.tasks.remaining > 0;
  const refused = new Set(deps.profile.rejected_task_types);
  return {
    accepting,
    operators_on_duty: onDuty,
    open_tasks: OPEN_STATUSES.reduce((sum, status) => sum + (byStatus[status] ?? 0), 0),
    response_target_hours: deps.profile.response_target_hours,
    by_type: TASK_TYPES.map((taskType) => {
      const accepted = total(histogramOf(taskType, 'accept'));
      const rejected = total(histogramOf(taskType, 'rejected'));
      return {
        task_type: taskType,
        accepting: accepting && !refused.has(taskType),
        delivered_30d: total(histogramOf(taskType, 'deliver')),
        acceptance_rate_30d: accepted + rejected === 0 ? null : Math.round((accepted / (accepted + rejected)) * 1000) / 1000,
        time_to_seen: timeOf(histogramOf(taskType, 'seen')),
        time_to_accept: timeOf(histogramOf(taskType, 'accept')),
        time_to_deliver: timeOf(histogramOf(taskType, 'deliver')),
      };
    }),
    updated_at: iso(now),
  };
}

function total(histogram: Histogram): number {
  let sum = 0;
  for (const count of histogram.values()) sum += count;
  return sum;
}

function timeOf(histogram: Histogram): CoverageTime {
  if (total(histogram) < COVERAGE_MIN_SAMPLES) return null;
  return { p50_seconds: Math.round(quantile(histogram, 0.5) ?? 0), p90_seconds: Math.round(quantile(histogram, 0.9) ?? 0) };
}
