import { type Insertable, sql } from 'kysely';
import { type CoverageKey, type CoverageMeasure, coverTask, parseCoverageKey } from '../domain/coverage.js';
import { writeChunks } from './batches.js';
import { type Db, withTransaction } from './db.js';
import { reusableRows } from './prepared.js';
import type { CoverageDaysTable, CoverageWindowTable } from './schema.js';

/**
 * Coverage histograms that do not cost more as history grows (docs/coverage.md). Each change of a
 * task adds what it contributes (domain/coverage.ts coverTask) in its own transaction, twice: to
 * its event's day (`coverage_days`) and to the window's sum (`coverage_window`). A read reads the
 * window's sum only: at most task types × measures × buckets rows, whatever the number of tasks
 * or days. When the window has moved past a day, the first read or write that sees it takes that
 * day's rows out of the sum (deleting them, and subtracting exactly what it deleted, so a
 * concurrent write to the old day on another instance is either in both or taken out later).
 */

const addDaysQuery = reusableRows(['day', 'task_type', 'measure', 'bucket', 'count'], (db, rows) =>
  db
    .insertInto('coverage_days')
    .values(rows as Insertable<CoverageDaysTable>[])
    .onConflict((oc) => oc.columns(['day', 'task_type', 'measure', 'bucket']).doUpdateSet({ count: sql<number>`coverage_days.count + excluded.count` })),
);

const addWindowQuery = reusableRows(['task_type', 'measure', 'bucket', 'count'], (db, rows) =>
  db
    .insertInto('coverage_window')
    .values(rows as Insertable<CoverageWindowTable>[])
    .onConflict((oc) => oc.columns(['task_type', 'measure', 'bucket']).doUpdateSet({ count: sql<number>`coverage_window.count + excluded.count` })),
);

interface WindowDelta {
  task_type: string;
  measure: string;
  bucket: number;
  count: number;
}

function windowKey(row: Omit<WindowDelta, 'count'>): string {
  return `${row.task_type}|${row.measure}|${row.bucket}`;
}

/** Adds to the window's sum, in key order (so two transactions never wait on each other in a cycle). */
async function addToWindow(db: Db, deltas: Map<string, WindowDelta>): Promise<void> {
  const rows = [...deltas]
    .filter(([, d]) => d.count !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d);
  for (const chunk of writeChunks(db, rows, 4)) await addWindowQuery(db, chunk);
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
  const window = new Map<string, WindowDelta>();
  for (const { day: _day, ...row } of days) {
    const key = windowKey(row);
    const sum = window.get(key);
    window.set(key, { ...row, count: (sum?.count ?? 0) + row.count });
  }
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
    const window = new Map<string, WindowDelta>();
    for (const row of gone) {
      const key = windowKey(row);
      window.set(key, { task_type: row.task_type, measure: row.measure, bucket: row.bucket, count: (window.get(key)?.count ?? 0) - Number(row.count) });
    }
    await addToWindow(trx, window);
    await trx.deleteFrom('coverage_window').where('count', '=', 0).execute();
  });
}

export interface CoverageRow {
  task_type: string;
  measure: CoverageMeasure;
  bucket: number;
  count: number;
}

/** The window's histograms: one row per task type, measure and bucket that holds a sample. */
export async function coverageWindow(db: Db): Promise<CoverageRow[]> {
  const rows = await db.selectFrom('coverage_window').select(['task_type', 'measure', 'bucket', 'count']).where('count', '>', 0).execute();
  return rows.map((r) => ({ task_type: r.task_type, measure: r.measure as CoverageMeasure, bucket: Number(r.bucket), count: Number(r.count) }));
}

/**
 * What every stored task contributes to the window that starts on `firstDay`, added a batch of
 * tasks at a time (migration 260; an operator may run it again after emptying both tables).
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
