import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { HeldActionsTable } from '../schema.js';

/** Console actions held for the undo window (migration 210). */

export type HeldActionRow = Selectable<HeldActionsTable>;

/**
 * Holds one action; false when the task has a change of status held already (the unique
 * held_actions_status_once_idx, migration 265): one statement decides it on every instance.
 */
export async function insertHeld(db: Db, row: HeldActionRow): Promise<boolean> {
  const result = await db
    .insertInto('held_actions')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Removes one held action; false when it is gone already (undone, or committed by another run). */
export async function deleteHeld(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('held_actions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Held actions whose window has passed at `at`, oldest first (held_actions_due_idx); at most `limit`. */
export async function dueHeld(db: Db, at: string, limit: number): Promise<HeldActionRow[]> {
  return db.selectFrom('held_actions').selectAll().where('commit_at', '<=', at).orderBy('commit_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
}

/** The actions held on one task (held_actions_task_idx), the first to commit first. */
export async function heldOnTask(db: Db, taskId: string): Promise<HeldActionRow[]> {
  return db.selectFrom('held_actions').selectAll().where('task_id', '=', taskId).orderBy('commit_at', 'asc').limit(20).execute();
}

export async function findHeld(db: Db, id: string): Promise<HeldActionRow | undefined> {
  return db.selectFrom('held_actions').selectAll().where('id', '=', id).executeTakeFirst();
}
