import Type, { type Static } from 'typebox';
import { TASK_TYPES } from './task.js';

/**
 * Coverage (contract "Know before you ask"): how soon a task of each type is seen, accepted and
 * delivered, measured over the last COVERAGE_WINDOW_DAYS. Durations are kept as log-spaced
 * histograms (a DDSketch-style mapping, pure rules here; the store keeps the counts,
 * store/tasks/coverage-repo.ts): a duration of `s` seconds falls in bucket `ceil(log_γ(s))`, and a bucket
 * reads back as `2γ^i / (γ + 1)`, within COVERAGE_RELATIVE_ERROR of every duration it holds.
 * Durations of a second or less share bucket 0 and read back as half a second.
 */

/** Relative error of a published duration (before rounding to whole seconds). */
export const COVERAGE_RELATIVE_ERROR = 0.02;
/** The window: this many UTC days, today included. */
export const COVERAGE_WINDOW_DAYS = 30;
/** Fewer samples than this and a duration is published as null. */
export const COVERAGE_MIN_SAMPLES = 5;

const GAMMA = (1 + COVERAGE_RELATIVE_ERROR) / (1 - COVERAGE_RELATIVE_ERROR);
const LOG_GAMMA = Math.log(GAMMA);

/** The histograms and counts kept per task type and day. */
export const COVERAGE_MEASURES = ['seen', 'accept', 'deliver', 'rejected'] as const;
export type CoverageMeasure = (typeof COVERAGE_MEASURES)[number];

/** The bucket of a duration in seconds. */
export function bucketOf(seconds: number): number {
  if (!(seconds > 1)) return 0;
  return Math.max(0, Math.ceil(Math.log(seconds) / LOG_GAMMA));
}

/** What a bucket reads back as, in seconds. */
export function bucketValue(bucket: number): number {
  return bucket <= 0 ? 0.5 : (2 * GAMMA ** bucket) / (GAMMA + 1);
}

/** The first day of the window that ends on `now`'s UTC day (YYYY-MM-DD). */
export function windowFirstDay(now: Date): string {
  return new Date(now.getTime() - (COVERAGE_WINDOW_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
}

/** What a task is made of, for coverage: its type, whether it is a test, and its timeline. */
export interface CoveredTask {
  task_type: string;
  is_test: number;
  created_at: string;
  seen_by_operator_at: string | null;
  accepted_at: string | null;
  delivered_at: string | null;
  rejected_at: string | null;
}

/** A count's key: `<day>|<task_type>|<measure>|<bucket>`. */
export type CoverageKey = `${string}|${string}|${CoverageMeasure}|${number}`;

/**
 * Adds `sign` times what `task` contributes, each sample on the UTC day of its event: the first
 * view, the acceptance and the delivery (durations from submission), and a rejection before any
 * acceptance (a refusal to take it; a rejection after acceptance was still a task taken). Test
 * tasks are left out, as from every published figure.
 */
export function coverTask(into: Map<CoverageKey, number>, task: CoveredTask, sign: 1 | -1): Map<CoverageKey, number> {
  if (task.is_test === 1) return into;
  const created = Date.parse(task.created_at);
  const add = (at: string | null, measure: CoverageMeasure) => {
    if (at === null) return;
    const bucket = measure === 'rejected' ? 0 : bucketOf((Date.parse(at) - created) / 1000);
    const key: CoverageKey = `${at.slice(0, 10)}|${task.task_type}|${measure}|${bucket}`;
    into.set(key, (into.get(key) ?? 0) + sign);
  };
  add(task.seen_by_operator_at, 'seen');
  add(task.accepted_at, 'accept');
  add(task.delivered_at, 'deliver');
  if (task.accepted_at === null) add(task.rejected_at, 'rejected');
  return into;
}

/** What changes when a task goes from `before` to `after`. */
export function coverageChange(before: CoveredTask, after: CoveredTask): Map<CoverageKey, number> {
  return coverTask(coverTask(new Map(), before, -1), after, 1);
}

export function parseCoverageKey(key: CoverageKey): { day: string; task_type: string; measure: CoverageMeasure; bucket: number } {
  const [day = '', task_type = '', measure = 'seen', bucket = '0'] = key.split('|');
  return { day, task_type, measure: measure as CoverageMeasure, bucket: Number(bucket) };
}

/**
 * The nearest-rank quantile of a histogram (`[bucket, count]` pairs by bucket): the value of the
 * first bucket whose running count reaches q·total; null when empty.
 */
export function quantile(buckets: readonly (readonly [number, number])[], q: number): number | null {
  let total = 0;
  for (const [, count] of buckets) total += count;
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bucket, count] of buckets) {
    seen += count;
    if (seen >= rank) return bucketValue(bucket);
  }
  return null;
}

export const CoverageTimeSchema = Type.Union(
  [
    Type.Object({
      p50_seconds: Type.Integer({ minimum: 0, description: 'Median, whole seconds (within 2 % before rounding).' }),
      p90_seconds: Type.Integer({ minimum: 0, description: '90th percentile, whole seconds (within 2 % before rounding).' }),
    }),
    Type.Null(),
  ],
  { description: `Over the last ${COVERAGE_WINDOW_DAYS} days, from submission; null with fewer than ${COVERAGE_MIN_SAMPLES} samples.` },
);
export type CoverageTime = Static<typeof CoverageTimeSchema>;

export const CoverageSchema = Type.Object(
  {
    accepting: Type.Boolean({ description: "Whether a submission now would be taken in (today's capacity is not used up)." }),
    operators_on_duty: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Operators on duty now; null when the deployment has no team (the owner works alone, by working hours).',
    }),
    open_tasks: Type.Integer({ minimum: 0, description: 'Tasks waiting on the operator now: submitted + accepted.' }),
    response_target_hours: Type.Number({ description: 'The operator aims to see every task within this many hours.' }),
    by_type: Type.Array(
      Type.Object({
        task_type: Type.Enum([...TASK_TYPES]),
        accepting: Type.Boolean({ description: 'Whether a task of this type would be taken in now (false for a type the operator always rejects).' }),
        delivered_30d: Type.Integer({ minimum: 0, description: `Tasks delivered in the last ${COVERAGE_WINDOW_DAYS} days.` }),
        acceptance_rate_30d: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
          description: 'accepted ÷ (accepted + rejected) among tasks decided in the window; null when none was.',
        }),
        time_to_seen: CoverageTimeSchema,
        time_to_accept: CoverageTimeSchema,
        time_to_deliver: CoverageTimeSchema,
      }),
    ),
    updated_at: Type.String({ description: 'When these figures were read (they move with every task, at once on every instance).' }),
  },
  { description: 'Live coverage: will a task be taken, and how long it takes, per task type, over the last 30 days.' },
);
export type Coverage = Static<typeof CoverageSchema>;
