import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { TaskApprovalsTable } from '../schema.js';

/** The approvals of proposals (migration 320, docs/approvals.md). Every query of task_approvals is here. */

export type ApprovalRow = Selectable<TaskApprovalsTable>;

export async function insertApproval(db: Db, row: ApprovalRow): Promise<void> {
  await db.insertInto('task_approvals').values(row).execute();
}

/** The approvals of one round, in the order given. */
export async function approvalsOf(db: Db, taskId: string, round: number): Promise<ApprovalRow[]> {
  return db.selectFrom('task_approvals').selectAll().where('task_id', '=', taskId).where('round', '=', round).orderBy('at').orderBy('approver').execute();
}

/** Whether this approver already approved this round. */
export async function hasApproved(db: Db, taskId: string, round: number, approver: string): Promise<boolean> {
  const row = await db
    .selectFrom('task_approvals')
    .select('approver')
    .where('task_id', '=', taskId)
    .where('round', '=', round)
    .where('approver', '=', approver)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether an assertion (by the SHA-256 of its signature) was counted already, on any task. */
export async function assertionUsed(db: Db, assertionSha256: string): Promise<boolean> {
  const row = await db.selectFrom('task_approvals').select('task_id').where('assertion_sha256', '=', assertionSha256).executeTakeFirst();
  return row !== undefined;
}
