import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { TaskSnoozesTable } from '../schema.js';

/** Snoozed tasks (migration 210): hidden from the console's default inbox until `until`. */

export type SnoozeRow = Selectable<TaskSnoozesTable>;

export async function putSnooze(db: Db, row: SnoozeRow): Promise<void> {
  await db
    .insertInto('task_snoozes')
    .values(row)
    .onConflict((oc) => oc.column('task_id').doUpdateSet({ until: row.until, created_at: row.created_at }))
    .execute();
}

export async function deleteSnooze(db: Db, taskId: string): Promise<boolean> {
  const result = await db.deleteFrom('task_snoozes').where('task_id', '=', taskId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Snoozes still running at `at`, the soonest to wake first (task_snoozes_until_idx); at most `limit`. */
export async function activeSnoozes(db: Db, at: string, limit: number): Promise<SnoozeRow[]> {
  return db.selectFrom('task_snoozes').selectAll().where('until', '>', at).orderBy('until', 'asc').orderBy('task_id', 'asc').limit(limit).execute();
}

export async function snoozeOf(db: Db, taskId: string, at: string): Promise<SnoozeRow | undefined> {
  return db.selectFrom('task_snoozes').selectAll().where('task_id', '=', taskId).where('until', '>', at).executeTakeFirst();
}

/** Forgets snoozes that have ended (at most `limit`, through task_snoozes_until_idx): the table holds running ones. */
export async function deleteEndedSnoozes(db: Db, at: string, limit: number): Promise<number> {
  const ended = db.selectFrom('task_snoozes').select('task_id').where('until', '<=', at).orderBy('until').limit(limit);
  const result = await db.deleteFrom('task_snoozes').where('task_id', 'in', ended).executeTakeFirst();
  return Number(result.numDeletedRows);
}
