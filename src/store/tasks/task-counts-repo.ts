import { type Insertable, sql } from 'kysely';
import type { Db } from '../db.js';
import type { TaskCountsTable } from '../schema.js';
import { writeChunks } from '../sqlite/batches.js';
import { reusableRows } from '../sqlite/prepared.js';

/**
 * Task counts that do not cost more as history grows (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): kept in `task_counts` by the
 * store functions that insert tasks or change their status or first view (tasks-repo.ts), in the
 * transaction of the change, so a count is never ahead of or behind the rows it counts. One row
 * per status within a scope:
 *
 * - `all`: tasks in that status, over all time (the console's tabs, metrics);
 * - a UTC creation day `YYYY-MM-DD`: tasks created that day now in that status (the stats window
 *   reads one row per day and status, whatever the number of tasks);
 * - `unseen` (status `submitted`): submitted tasks the operator has not opened (the console's title).
 *
 * Scopes compare as text: days are fixed-width digits, which sort before the letters of `all` and
 * `unseen` in every collation.
 */

/** What a task contributes to the counts. */
export interface CountedTask {
  status: string;
  created_at: string;
  seen_by_operator_at: string | null;
}

/** A count's key in the maps below: `<scope>|<status>`. */
export type CountKey = `${string}|${string}`;

const ALL = 'all';
const UNSEEN = 'unseen';

/** The creation day of an ISO timestamp, as the day scopes name it. */
export function dayOf(at: string): string {
  return at.slice(0, 10);
}

/** Adds `sign` times what `task` contributes to `into`. */
export function countTask(into: Map<CountKey, number>, task: CountedTask, sign: 1 | -1): Map<CountKey, number> {
  const add = (key: CountKey) => into.set(key, (into.get(key) ?? 0) + sign);
  add(`${ALL}|${task.status}`);
  add(`${dayOf(task.created_at)}|${task.status}`);
  if (task.status === 'submitted' && task.seen_by_operator_at === null) add(`${UNSEEN}|submitted`);
  return into;
}

/** What changes when a task goes from `before` to `after`. */
export function countChange(before: CountedTask, after: CountedTask): Map<CountKey, number> {
  return countTask(countTask(new Map(), before, -1), after, 1);
}

/** The upsert of task counts, compiled once per row count (prepared.ts). */
const addTaskCountsQuery = reusableRows(['scope', 'status', 'count'], (db, rows) =>
  db
    .insertInto('task_counts')
    .values(rows as Insertable<TaskCountsTable>[])
    .onConflict((oc) => oc.columns(['scope', 'status']).doUpdateSet({ count: sql<number>`task_counts.count + excluded.count` })),
);

/**
 * Applies the deltas, in key order (two transactions touching the same rows lock them in the same
 * order, so they cannot deadlock on each other), skipping those that cancel out. Must run in the
 * transaction of the change it counts.
 */
export async function addTaskCounts(db: Db, deltas: Map<CountKey, number>): Promise<void> {
  const rows = [...deltas]
    .filter(([, by]) => by !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, count]) => {
      const bar = key.indexOf('|');
      return { scope: key.slice(0, bar), status: key.slice(bar + 1), count };
    });
  for (const chunk of writeChunks(db, rows, 3)) await addTaskCountsQuery(db, chunk);
}

/** Tasks per status, over all time: one row per status. */
export async function statusCounts(db: Db): Promise<Record<string, number>> {
  const rows = await db.selectFrom('task_counts').select(['status', 'count']).where('scope', '=', ALL).execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
}

/** Tasks per status created on the days `from` through `to` (inclusive, YYYY-MM-DD): one row per day and status. */
export async function dayCounts(db: Db, from: string, to: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('task_counts').select(['status', 'count']).where('scope', '>=', from).where('scope', '<=', to).execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + Number(row.count);
  return counts;
}

/** Submitted tasks the operator has not opened yet. */
export async function unseenCount(db: Db): Promise<number> {
  const row = await db.selectFrom('task_counts').select('count').where('scope', '=', UNSEEN).where('status', '=', 'submitted').executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Every count as stored, zeros left out (tests compare it with recountTasks). */
export async function storedTaskCounts(db: Db): Promise<Map<CountKey, number>> {
  const rows = await db.selectFrom('task_counts').select(['scope', 'status', 'count']).execute();
  return new Map(rows.filter((r) => Number(r.count) !== 0).map((r) => [`${r.scope}|${r.status}` as CountKey, Number(r.count)]));
}

/**
 * Every count recomputed from the tasks themselves: a full scan in batches, for tests and for an
 * operator who wants to check the kept counts (docs/operations.md), never for a page.
 */
export async function recountTasks(db: Db): Promise<Map<CountKey, number>> {
  const counts = new Map<CountKey, number>();
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('tasks')
      .select(['id', 'status', 'created_at', 'seen_by_operator_at'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(5000)
      .execute();
    for (const row of rows) countTask(counts, row, 1);
    const last = rows.at(-1);
    if (!last || rows.length < 5000) break;
    after = last.id;
  }
  for (const [key, count] of counts) if (count === 0) counts.delete(key);
  return counts;
}
