import { ALL_STATUSES, OPEN_STATUSES } from '../../domain/tasks/task.js';
import { iso } from '../../domain/time.js';
import { countTasksByStatus, taskTimings } from '../../store/tasks/tasks-repo.js';

export { RECENT_SAMPLE } from '../../store/tasks/tasks-repo.js';

import type { ServiceDeps } from '../context.js';

/** Median and 90th percentile of a set of durations, in whole seconds; null when there are none. */
export interface DurationStats {
  median: number | null;
  p90: number | null;
  samples: number;
}

export interface TaskStats {
  counts_by_status: Record<string, number>;
  /** Tasks still waiting on the operator: submitted + accepted. */
  open_queue: number;
  time_to_first_view_seconds: DurationStats;
  time_to_acceptance_seconds: DurationStats;
}

export interface TaskStatsOptions {
  /** Window over task creation time, in days; default 30. */
  days?: number;
}

const DEFAULT_DAYS = 30;

/**
 * Live figures over the tasks created in the last `days`: the operator's stats page and the
 * public discovery documents both read them, so they never disagree. The counts come from the
 * counts kept with each change; the durations from the most recent RECENT_SAMPLE tasks of the
 * window (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28: a bounded sample, so the figures cost the same at any size of history).
 */
export async function taskStats(deps: ServiceDeps, options: TaskStatsOptions = {}): Promise<TaskStats> {
  const days = options.days ?? DEFAULT_DAYS;
  const since = iso(new Date(deps.clock.now().getTime() - days * 86_400_000));
  const counted = await countTasksByStatus(deps.store.db, since);
  const counts_by_status: Record<string, number> = {};
  for (const status of ALL_STATUSES) counts_by_status[status] = 0;
  Object.assign(counts_by_status, counted);

  // Durations are computed here rather than in SQL: timestamps are ISO text on both stores, and
  // the sample is bounded (taskTimings), so one narrow select is simpler than two dialects of
  // date arithmetic.
  const timed = await taskTimings(deps.store.db, since);
  const firstView: number[] = [];
  const acceptance: number[] = [];
  for (const row of timed) {
    const created = Date.parse(row.created_at);
    if (row.seen_by_operator_at !== null) firstView.push((Date.parse(row.seen_by_operator_at) - created) / 1000);
    if (row.accepted_at !== null) acceptance.push((Date.parse(row.accepted_at) - created) / 1000);
  }

  return {
    counts_by_status,
    open_queue: OPEN_STATUSES.reduce((sum, status) => sum + (counts_by_status[status] ?? 0), 0),
    time_to_first_view_seconds: durationStats(firstView),
    time_to_acceptance_seconds: durationStats(acceptance),
  };
}

/** Nearest-rank percentiles (no interpolation), rounded to whole seconds. */
export function durationStats(values: number[]): DurationStats {
  if (values.length === 0) return { median: null, p90: null, samples: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number => {
    const index = Math.max(0, Math.ceil(p * sorted.length) - 1);
    return Math.round(Math.max(0, sorted[index] ?? 0));
  };
  return { median: rank(0.5), p90: rank(0.9), samples: sorted.length };
}
