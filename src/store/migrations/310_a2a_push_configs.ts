import type { Kysely } from 'kysely';

/**
 * A2A push notification configs (docs/a2a.md, "Push notifications"): at most 5 per task, each a
 * receiver URL with the A2A token and authentication to send with every notification. The
 * notifications themselves are rows of the webhook outbox, tied to their config by
 * `webhook_outbox.push_config_id` (null for the task's own callback_url events), so a deleted
 * config's pending notifications are found and stopped, and delivery reads the config's headers
 * from here instead of copying the credentials into every row.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('a2a_push_configs')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('token', 'text')
    .addColumn('auth_scheme', 'text')
    .addColumn('auth_credentials', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('a2a_push_configs_pk', ['task_id', 'id'])
    .execute();
  await db.schema.alterTable('webhook_outbox').addColumn('push_config_id', 'text').execute();
}
