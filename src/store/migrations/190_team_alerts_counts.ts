import { type Kysely, sql } from 'kysely';
import { OPEN_STATUSES } from '../../domain/tasks/task.js';

/**
 * Alerts and counts of a team (docs/team.md), additive only:
 *
 * - `push_subscriptions.operator_id`: the operator whose console session subscribed the device, so
 *   Web Push is routed like mail (the assignee, else everyone on duty). Null for the owner's
 *   devices and for every subscription made before this migration: those keep getting what they
 *   got, whenever the team is not routing (nobody on duty, no team).
 * - `assignment_counts`: open tasks assigned to each operator, kept in the transaction of every
 *   change of an assignment or of a task's status (assignments-repo.ts), so the queue's Mine and
 *   Unassigned counts never count the queue. Filled here once from the assignments so far.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_subscriptions').addColumn('operator_id', 'text').execute();
  await db.schema.createIndex('push_subscriptions_operator_idx').on('push_subscriptions').column('operator_id').execute();

  await db.schema
    .createTable('assignment_counts')
    .addColumn('operator_id', 'text', (c) => c.primaryKey())
    .addColumn('open_tasks', 'bigint', (c) => c.notNull())
    .execute();
  const open = sql.join(OPEN_STATUSES.map((status) => sql.lit(status)));
  await sql`insert into assignment_counts (operator_id, open_tasks)
    select task_assignments.operator_id, count(*) from task_assignments join tasks on tasks.id = task_assignments.task_id
    where tasks.status in (${open}) group by task_assignments.operator_id`.execute(db);
}
