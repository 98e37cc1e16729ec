import type { Kysely } from 'kysely';

/**
 * Webhooks (docs/webhooks.md): the task's private `callback_url`, the webhook outbox (one row per event,
 * claimed under a lease like the mail outbox) and the log of every delivery attempt.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('callback_url', 'text').execute();
  await db.schema
    .createTable('webhook_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('claim_token', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  // One event of each kind per task: a transition cannot queue its webhook twice.
  await db.schema.createIndex('webhook_outbox_task_event_idx').on('webhook_outbox').columns(['task_id', 'event']).unique().execute();
  await db.schema.createIndex('webhook_outbox_due_idx').on('webhook_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_attempts_event_idx').on('webhook_attempts').columns(['event_id', 'at']).execute();
}
