import { dailyCapUsage } from '../abuse/quotas.js';
import { iso } from '../domain/time.js';
import { type SeenWithinTarget, seenWithinTarget } from '../services/alerts/response-target.js';
import { type DurationStats, RECENT_SAMPLE, taskStats } from '../services/console/stats.js';
import type { ServiceDeps } from '../services/context.js';
import { onDutyCount } from '../services/team/operators.js';

/**
 * The live transparency figures capabilities.json, human.json and the home page publish: how long
 * the queue is, how fast the operator really is, and how much of today's capacity is left.
 */
export interface LiveFigures {
  as_of: string;
  window_days: number;
  /**
   * The durations and the seen-within-target share are measured over at most this many of the
   * window's most recent tasks (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28: a bounded sample, so the figures cost the same at any
   * size of history); the open queue and the capacity are exact.
   */
  sample_tasks: number;
  open_queue: number;
  time_to_first_view_seconds: DurationStats;
  time_to_acceptance_seconds: DurationStats;
  /** The measured share of tasks first seen within the response target (RESPONSE_TARGET_HOURS). */
  seen_within_target: SeenWithinTarget;
  remaining_capacity_today: { tasks: number; task_cap: number; resets_at: string };
  accepting_tasks: boolean;
  /**
   * Operators on duty now (docs/team.md): availability follows who is. null when the deployment has no
   * operators (the owner works alone, by working_hours).
   */
  operators_on_duty: number | null;
}

export const LIVE_WINDOW_DAYS = 30;
/** Documents are read far more often than tasks change: a few seconds of staleness keeps them cheap. */
export const LIVE_CACHE_MS = 5_000;

export type LiveSource = () => Promise<LiveFigures>;

async function compute(deps: ServiceDeps): Promise<LiveFigures> {
  const [stats, caps, target, onDuty] = await Promise.all([
    taskStats(deps, { days: LIVE_WINDOW_DAYS }),
    dailyCapUsage(deps),
    seenWithinTarget(deps, LIVE_WINDOW_DAYS),
    onDutyCount(deps),
  ]);
  return {
    as_of: iso(deps.clock.now()),
    window_days: LIVE_WINDOW_DAYS,
    sample_tasks: RECENT_SAMPLE,
    open_queue: stats.open_queue,
    time_to_first_view_seconds: stats.time_to_first_view_seconds,
    time_to_acceptance_seconds: stats.time_to_acceptance_seconds,
    seen_within_target: target,
    remaining_capacity_today: { tasks: caps.tasks.remaining, task_cap: caps.tasks.cap, resets_at: caps.resets_at },
    accepting_tasks: caps.tasks.remaining > 0,
    operators_on_duty: onDuty,
  };
}

/**
 * A cached reader of the figures: at most one store round-trip per LIVE_CACHE_MS (by the service
 * clock, so tests can move past it), and concurrent readers share the one in flight.
 */
export function liveFigures(deps: ServiceDeps, ttlMs = LIVE_CACHE_MS): LiveSource {
  let value: LiveFigures | undefined;
  let computedAt = 0;
  let inFlight: Promise<LiveFigures> | undefined;
  return async () => {
    const now = deps.clock.now().getTime();
    if (value && now - computedAt < ttlMs && now >= computedAt) return value;
    inFlight ??= compute(deps)
      .then((fresh) => {
        value = fresh;
        computedAt = now;
        return fresh;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}
