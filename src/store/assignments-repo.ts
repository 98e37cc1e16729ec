import { padded } from './batches.js';
import type { Db } from './db.js';

/** Who each task is assigned to (task_assignments, migration 140): one row per assigned task. */

/** Assigns a task (or unassigns it, with null). Call it in the transaction of the PATCH. */
export async function setAssignment(db: Db, taskId: string, operatorId: string | null, at: string): Promise<void> {
  if (operatorId === null) {
    await db.deleteFrom('task_assignments').where('task_id', '=', taskId).execute();
    return;
  }
  await db
    .insertInto('task_assignments')
    .values({ task_id: taskId, operator_id: operatorId, assigned_at: at })
    .onConflict((oc) => oc.column('task_id').doUpdateSet({ operator_id: operatorId, assigned_at: at }))
    .execute();
}

export async function assigneeOf(db: Db, taskId: string): Promise<string | null> {
  const row = await db.selectFrom('task_assignments').select('operator_id').where('task_id', '=', taskId).executeTakeFirst();
  return row?.operator_id ?? null;
}

/** The assignees of a page of tasks, in one query. */
export async function assigneesOf(db: Db, taskIds: readonly string[]): Promise<Map<string, string>> {
  if (taskIds.length === 0) return new Map();
  const rows = await db.selectFrom('task_assignments').select(['task_id', 'operator_id']).where('task_id', 'in', padded(taskIds)).execute();
  return new Map(rows.map((row) => [row.task_id, row.operator_id]));
}

/** Open tasks assigned to `operatorId`, and open tasks assigned to nobody (the console's Mine / Unassigned counts). */
export async function countOpenByAssignment(
  db: Db,
  operatorId: string | undefined,
  openStatuses: readonly string[],
): Promise<{ mine: number; unassigned: number }> {
  const mine = operatorId
    ? await db
        .selectFrom('task_assignments')
        .innerJoin('tasks', 'tasks.id', 'task_assignments.task_id')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('task_assignments.operator_id', '=', operatorId)
        .where('tasks.status', 'in', [...openStatuses])
        .executeTakeFirstOrThrow()
    : { n: 0 };
  const unassigned = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', 'in', [...openStatuses])
    .where((eb) => eb.not(eb.exists(eb.selectFrom('task_assignments').select('task_id').whereRef('task_assignments.task_id', '=', 'tasks.id'))))
    .executeTakeFirstOrThrow();
  return { mine: Number(mine.n), unassigned: Number(unassigned.n) };
}
