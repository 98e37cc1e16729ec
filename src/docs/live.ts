import { dailyCapUsage } from '../abuse/quotas.js';
import { iso } from '../domain/time.js';
import type { ServiceDeps } from '../services/context.js';
import { type SeenWithinTarget, seenWithinTarget } from '../services/response-target.js';
import { type DurationStats, taskStats } from '../services/stats.js';

/**
 * The live transparency figures capabilities.json, human.json and the home page publish: how long
 * the queue is, how fast the operator really is, and how much of today's capacity is left.
 */
export interface LiveFigures {
  as_of: string;
  window_days: number;
  open_queue: number;
  time_to_first_view_seconds: DurationStats;
  time_to_acceptance_seconds: DurationStats;
  /** The measured share of tasks first seen within the response target (RESPONSE_TARGET_HOURS). */
  seen_within_target: SeenWithinTarget;
  remaining_capacity_today: { tasks: number; task_cap: number; resets_at: string };
  accepting_tasks: boolean;
}

export const LIVE_WINDOW_DAYS = 30;
/** Documents are read far more often than tasks change: a few seconds of staleness keeps them cheap. */
export const LIVE_CACHE_MS = 5_000;

export type LiveSource = () => Promise<LiveFigures>;

async function compute(deps: ServiceDeps): Promise<LiveFigures> {
  const [stats, caps, target] = await Promise.all([taskStats(deps, { days: LIVE_WINDOW_DAYS }), dailyCapUsage(deps), seenWithinTarget(deps, LIVE_WINDOW_DAYS)]);
  return {
    as_of: iso(deps.clock.now()),
    window_days: LIVE_WINDOW_DAYS,
    open_queue: stats.open_queue,
    time_to_first_view_seconds: stats.time_to_first_view_seconds,
    time_to_acceptance_seconds: stats.time_to_acceptance_seconds,
    seen_within_target: target,
    remaining_capacity_today: { tasks: caps.tasks.remaining, task_cap: caps.tasks.cap, resets_at: caps.resets_at },
    accepting_tasks: caps.tasks.remaining > 0,
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
