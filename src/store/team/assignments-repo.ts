import { sql } from 'kysely';
import { OPEN_STATUSES, type TaskStatus } from '../../domain/tasks/task.js';
import type { Db } from '../db.js';
import { isSqlite, padded } from '../sqlite/batches.js';

/**
 * Who each task is assigned to (task_assignments, migration 140): one row per assigned task; and
 * how many open tasks each operator holds (assignment_counts, migration 190), kept in the
 * transaction of every change of an assignment (setAssignment) or of a status (countStatusChange,
 * called by tasks-repo.ts beside the task counts), so the queue's Mine / Unassigned counts read one
 * row per operator instead of counting the queue.
 */

function isOpen(status: string): boolean {
  return OPEN_STATUSES.includes(status as TaskStatus);
}

/**
 * Adds the deltas (operator → change of their open assigned tasks), in operator order so two
 * transactions touching the same rows lock them in the same order; deltas that cancel are skipped.
 */
async function addAssignmentCounts(db: Db, deltas: Map<string, number>): Promise<void> {
  const rows = [...deltas]
    .filter(([, by]) => by !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([operator_id, open_tasks]) => ({ operator_id, open_tasks }));
  if (rows.length === 0) return;
  await db
    .insertInto('assignment_counts')
    .values(rows)
    .onConflict((oc) => oc.column('operator_id').doUpdateSet({ open_tasks: sql<number>`assignment_counts.open_tasks + excluded.open_tasks` }))
    .execute();
}

/**
 * Assigns a task (or unassigns it, with null), and moves the open task between the operators'
 * counts. Call it in the transaction of the PATCH: on PostgreSQL it takes the task's row lock first,
 * so a status change of the same task (which updates that row) counts after it, or before it.
 */
export async function setAssignment(db: Db, taskId: string, operatorId: string | null, at: string): Promise<void> {
  let query = db.selectFrom('tasks').select('status').where('id', '=', taskId);
  if (!isSqlite(db)) query = query.forUpdate();
  const task = await query.executeTakeFirst();
  const before = await assigneeOf(db, taskId);
  if (operatorId === null) {
    await db.deleteFrom('task_assignments').where('task_id', '=', taskId).execute();
  } else {
    await db
      .insertInto('task_assignments')
      .values({ task_id: taskId, operator_id: operatorId, assigned_at: at })
      .onConflict((oc) => oc.column('task_id').doUpdateSet({ operator_id: operatorId, assigned_at: at }))
      .execute();
  }
  if (task === undefined || !isOpen(task.status) || before === operatorId) return;
  const deltas = new Map<string, number>();
  if (before !== null) deltas.set(before, -1);
  if (operatorId !== null) deltas.set(operatorId, 1);
  await addAssignmentCounts(db, deltas);
}

/**
 * A task's status changed from `from` to `to` (in the transaction of the change, after the task's
 * row was updated, so its lock is held): its assignee's count follows when it opened or closed.
 * One read by primary key, and only for a delivery or rejection (or an import's reopening).
 */
export async function countStatusChange(db: Db, taskId: string, from: string, to: string): Promise<void> {
  if (isOpen(from) === isOpen(to)) return;
  const assignee = await assigneeOf(db, taskId);
  if (assignee !== null) await addAssignmentCounts(db, new Map([[assignee, isOpen(to) ? 1 : -1]]));
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

/**
 * Open tasks assigned to each operator, as kept (zeros left out): one row per operator who ever
 * held an open task, a team rather than a history.
 */
export async function openAssignedCounts(db: Db): Promise<Map<string, number>> {
  const rows = await db.selectFrom('assignment_counts').select(['operator_id', 'open_tasks']).execute();
  return new Map(rows.filter((row) => Number(row.open_tasks) !== 0).map((row) => [row.operator_id, Number(row.open_tasks)]));
}

/**
 * The same counts recomputed from the assignments and tasks themselves: a full walk in batches,
 * for tests and for checking the kept counts, never for a page.
 */
export async function recountOpenAssigned(db: Db): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('task_assignments')
      .innerJoin('tasks', 'tasks.id', 'task_assignments.task_id')
      .select(['task_assignments.task_id', 'task_assignments.operator_id', 'tasks.status'])
      .where('task_assignments.task_id', '>', after)
      .orderBy('task_assignments.task_id')
      .limit(5000)
      .execute();
    for (const row of rows) if (isOpen(row.status)) counts.set(row.operator_id, (counts.get(row.operator_id) ?? 0) + 1);
    const last = rows.at(-1);
    if (!last || rows.length < 5000) break;
    after = last.task_id;
  }
  return counts;
}
