import { type Insertable, sql } from 'kysely';
import { type CoverageKey, type CoverageMeasure, coverTask, parseCoverageKey } from '../../domain/tasks/coverage.js';
import { type Db, withTransaction } from '../db.js';
import type { CoverageDaysTable } from '../schema.js';
import { isSqlite, writeChunks } from '../sqlite/batches.js';
import { reusableRows } from '../sqlite/prepared.js';

/**
 * Coverage histograms that do not cost more as history grows (docs/coverage.md). Each change of a
 * task adds what it contributes (domain/tasks/coverage.ts coverTask) in its own transaction, twice: to
 * its event's day (`coverage_days`, one row per day, task type, measure and bucket) and to the
 * window's sum (`coverage_window`, one row per task type and measure holding its whole histogram,
 * so a read reads a few dozen rows whatever the number of tasks, days or buckets). When the window
 * has moved past a day, the first read that sees it takes that day's rows out of the sum (deleting
 * them, and subtracting exactly what it deleted, so a concurrent write to the old day on another
 * instance is either in both or taken out by a later read).
 */

const addDaysQuery = reusableRows(['day', 'task_type', 'measure', 'bucket', 'count'], (db, rows) =>
  db
    .insertInto('coverage_days')
    .values(rows as Insertable<CoverageDaysTable>[])
    .onConflict((oc) => oc.columns(['day', 'task_type', 'measure', 'bucket']).doUpdateSet({ count: sql<number>`coverage_days.count + excluded.count` })),
);

/** A histogram as stored: `[bucket, count]` pairs by bucket, none zero. */
export type Buckets = [bucket: number, count: number][];

/** Deltas per histogram (`<task_type>|<measure>`), per bucket. */
type WindowDeltas = Map<string, Map<number, number>>;

function addDelta(into: WindowDeltas, taskType: string, measure: string, bucket: number, by: number): void {
  const key = `${taskType}|${measure}`;
  let histogram = into.get(key);
  if (!histogram) into.set(key, (histogram = new Map()));
  histogram.set(bucket, (histogram.get(bucket) ?? 0) + by);
}

/**
 * Adds to the window's histograms: each row is made sure of, locked (PostgreSQL, in key order, so
 * two transactions never wait on each other in a cycle), merged and written back. A transition
 * touches one to three histograms of one task type.
 */
async function addToWindow(db: Db, deltas: WindowDeltas): Promise<void> {
  const keys = [...deltas.keys()].sort();
  if (keys.length === 0) return;
  const pairs = keys.map((key) => {
    const bar = key.indexOf('|');
    return { task_type: key.slice(0, bar), measure: key.slice(bar + 1) };
  });
  await db
    .insertInto('coverage_window')
    .values(pairs.map((p) => ({ ...p, total: 0, buckets: '[]' })))
    .onConflict((oc) => oc.columns(['task_type', 'measure']).doNothing())
    .execute();
  let query = db
    .selectFrom('coverage_window')
    .select(['task_type', 'measure', 'buckets'])
    .where((eb) => eb.or(pairs.map((p) => eb.and([eb('task_type', '=', p.task_type), eb('measure', '=', p.measure)]))))
    .orderBy('task_type')
    .orderBy('measure');
  if (!isSqlite(db)) query = query.forUpdate();
  for (const row of await query.execute()) {
    const merged = new Map(JSON.parse(row.buckets) as Buckets);
    for (const [bucket, by] of deltas.get(`${row.task_type}|${row.measure}`) ?? []) merged.set(bucket, (merged.get(bucket) ?? 0) + by);
    const buckets: Buckets = [...merged].filter(([, count]) => count > 0).sort(([a], [b]) => a - b);
    await db
      .updateTable('coverage_window')
      .set({ total: buckets.reduce((sum, [, count]) => sum + count, 0), buckets: JSON.stringify(buckets) })
      .where('task_type', '=', row.task_type)
      .where('measure', '=', row.measure)
      .execute();
  }
}

/**
 * Applies the deltas of a change, in the transaction of the change it counts. Samples before
 * `firstDay` are left out (the backfill's window); a change's own samples are all kept, whatever
 * their day: one out of the window already is taken out by the next read (rollCoverageWindow), so
 * no writer needs to agree with the readers' clock.
 */
export async function addCoverage(db: Db, deltas: Map<CoverageKey, number>, firstDay = ''): Promise<void> {
  if (deltas.size === 0) return;
  const days = [...deltas]
    .filter(([key, by]) => by !== 0 && key.slice(0, 10) >= firstDay)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, count]) => ({ ...parseCoverageKey(key), count }));
  if (days.length === 0) return;
  const window: WindowDeltas = new Map();
  for (const row of days) addDelta(window, row.task_type, row.measure, row.bucket, row.count);
  await withTransaction(db, async (trx) => {
    for (const chunk of writeChunks(trx, days, 5)) await addDaysQuery(trx, chunk);
    await addToWindow(trx, window);
  });
}

/**
 * Takes the days before `firstDay` out of the window's sum, if any are left (one index probe when
 * none is). Exactly the rows deleted are subtracted, so the sum stays the sum of the days kept.
 */
export async function rollCoverageWindow(db: Db, firstDay: string): Promise<void> {
  const old = await db.selectFrom('coverage_days').select('day').where('day', '<', firstDay).limit(1).executeTakeFirst();
  if (!old) return;
  await withTransaction(db, async (trx) => {
    const gone = await trx.deleteFrom('coverage_days').where('day', '<', firstDay).returning(['task_type', 'measure', 'bucket', 'count']).execute();
    const window: WindowDeltas = new Map();
    for (const row of gone) addDelta(window, row.task_type, row.measure, Number(row.bucket), -Number(row.count));
    await addToWindow(trx, window);
  });
}

export interface CoverageHistogram {
  task_type: string;
  measure: CoverageMeasure;
  total: number;
  buckets: Buckets;
}

/** The window's histograms: one row per task type and measure. */
export async function coverageWindow(db: Db): Promise<CoverageHistogram[]> {
  const rows = await db.selectFrom('coverage_window').select(['task_type', 'measure', 'total', 'buckets']).where('total', '>', 0).execute();
  return rows.map((r) => ({
    task_type: r.task_type,
    measure: r.measure as CoverageMeasure,
    total: Number(r.total),
    buckets: JSON.parse(r.buckets) as Buckets,
  }));
}

/**
 * What every stored task contributes to the window that starts on `firstDay`, added a batch of
 * tasks at a time (migration 280; an operator may run it again after emptying both tables).
 */
export async function backfillCoverage(db: Db, firstDay: string): Promise<void> {
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('tasks')
      .select(['id', 'task_type', 'is_test', 'created_at', 'seen_by_operator_at', 'accepted_at', 'delivered_at', 'rejected_at'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BACKFILL_BATCH)
      .execute();
    const deltas = new Map<CoverageKey, number>();
    for (const row of rows) coverTask(deltas, row, 1);
    await addCoverage(db, deltas, firstDay);
    const last = rows.at(-1);
    if (!last || rows.length < BACKFILL_BATCH) return;
    after = last.id;
  }
}

const BACKFILL_BATCH = 5000;
