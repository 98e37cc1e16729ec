import { type Kysely, sql } from 'kysely';

/**
 * Decisions by more than one person (docs/approvals.md).
 *
 * - `tasks.approvals_required` (1 to 5, 1 by default: today's single operator) and the kept
 *   `approvals_given` of the current proposal, so the public task reads both without counting.
 * - `tasks.approval_round`: which proposal the task is on (each delivery of a task that needs more
 *   than one approval opens a round); every change of the approvals is a conditional update on it
 *   and on `approvals_given`, so racing approvals, send-backs and rejections resolve one way.
 * - `tasks.proposal`: the proposed deliverable and who proposed it, as JSON, until it is delivered or
 *   sent back; `tasks.approval_returned`: the last send-back (who, when, why), which the proposer sees.
 * - `task_approvals`: one row per approval of a round (the proposer's first): who, with which
 *   passkey and its WebAuthn assertion. The primary key makes "the same operator twice" impossible on
 *   every instance; `assertion_sha256` (unique) makes an assertion single-use.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('approvals_required', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('tasks')
    .addColumn('approvals_given', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('tasks')
    .addColumn('approval_round', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('tasks').addColumn('proposal', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('approval_returned', 'text').execute();
  // The console's "Approve" view: the tasks with a proposal waiting, without scanning the others.
  await db.schema.createIndex('tasks_proposed_idx').on('tasks').columns(['updated_at', 'id']).where(sql.ref('proposal'), 'is not', null).execute();
  await db.schema
    .createTable('task_approvals')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('round', 'integer', (c) => c.notNull())
    .addColumn('approver', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('attestation', 'text')
    .addColumn('assertion_sha256', 'text', (c) => c.unique())
    .addPrimaryKeyConstraint('task_approvals_pk', ['task_id', 'round', 'approver'])
    .execute();
}
