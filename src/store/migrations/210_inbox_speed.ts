import type { Kysely } from 'kysely';

/**
 * Speed for a practised operator (docs/inbox.md): the console queue's filters and sorts, snoozes, undo
 * and the operator's templates. Additive only: indexes on tasks and three new tables.
 *
 * - Each filter and sort of the queue walks one index that ends in `id` (the keyset tie-break), so
 *   a page stops after `limit` rows whatever the history: the type, requester (contact e-mail) and
 *   on-site filters in creation order, the deadline filter and sort by deadline, the ETA sort and
 *   the passed-ETA half of "overdue" (the other half uses tasks_status_due_idx of migration 130).
 * - `task_snoozes`: a task hidden from the default inbox until `until`.
 * - `held_actions`: console actions held for the undo window, committed by the periodic committer
 *   when `commit_at` passes (services/console/held-actions.ts); rows live in the store, so a restart loses none.
 * - `reply_templates`: canned replies and delivery templates the operator uses and an admin edits.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('tasks_type_queue_idx').on('tasks').columns(['task_type', 'status', 'created_at', 'id']).execute();
  await db.schema.createIndex('tasks_contact_queue_idx').on('tasks').columns(['contact_email', 'status', 'created_at', 'id']).execute();
  await db.schema.createIndex('tasks_onsite_queue_idx').on('tasks').columns(['location_required', 'status', 'created_at', 'id']).execute();
  await db.schema.createIndex('tasks_deadline_queue_idx').on('tasks').columns(['status', 'deadline_at', 'id']).execute();
  await db.schema.createIndex('tasks_eta_queue_idx').on('tasks').columns(['status', 'eta', 'id']).execute();

  await db.schema
    .createTable('task_snoozes')
    .addColumn('task_id', 'text', (c) => c.primaryKey())
    .addColumn('until', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('task_snoozes_until_idx').on('task_snoozes').columns(['until', 'task_id']).execute();

  await db.schema
    .createTable('held_actions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    // accept | reject | deliver | reply
    .addColumn('kind', 'text', (c) => c.notNull())
    // The service call's input (a PATCH body, or {message_id, message}), as JSON.
    .addColumn('payload', 'text', (c) => c.notNull())
    // The actor who acted, as JSON: the commit is recorded in their name.
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('commit_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('held_actions_due_idx').on('held_actions').columns(['commit_at', 'id']).execute();
  await db.schema.createIndex('held_actions_task_idx').on('held_actions').columns(['task_id', 'commit_at']).execute();

  await db.schema
    .createTable('reply_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // reply (a canned reply to a message) | result (a delivery template)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('reply_templates_kind_idx').on('reply_templates').columns(['kind', 'name', 'id']).execute();
}
