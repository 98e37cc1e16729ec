import type { Insertable, Selectable } from 'kysely';
import type { PublicTask } from '../domain/schemas.js';
import type { StatusEntry, TaskStatus, TaskType, Source } from '../domain/task.js';
import type { Db } from './db.js';
import type { TasksTable } from './schema.js';

export type TaskRow = Selectable<TasksTable>;

export async function insertTask(db: Db, row: Insertable<TasksTable>): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateTask(db: Db, id: string, changes: Partial<TasksTable>): Promise<void> {
  await db.updateTable('tasks').set(changes).where('id', '=', id).execute();
}

export function statusHistory(row: Pick<TaskRow, 'status_history'>): StatusEntry[] {
  return JSON.parse(row.status_history) as StatusEntry[];
}

/** The task as the public status endpoint returns it: never the contact e-mail or the client. */
export function toPublicTask(row: TaskRow): PublicTask {
  const task: PublicTask = {
    task_id: row.id,
    status: row.status as TaskStatus,
    task_type: row.task_type as TaskType,
    description: row.description,
    location_required: row.location_required === 1,
    location_detail: row.location_detail,
    deadline: row.deadline,
    output_format: row.output_format,
    budget_usd: row.budget_usd,
    requester: row.requester,
    source: row.source as Source,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status_history: statusHistory(row),
    operator_notes: row.operator_notes,
    seen_by_operator_at: row.seen_by_operator_at,
    eta: row.eta,
  };
  if (row.receipt !== null) {
    task.receipt = row.receipt;
    task.deliverable_sha256 = row.deliverable_sha256 ?? '';
    task.receipt_issued_at = row.receipt_issued_at ?? '';
  }
  return task;
}
