import type { Kysely } from 'kysely';

/**
 * Operator alerts by Web Push: the browsers subscribed to notifications (their push service
 * endpoint and the keys that encrypt for them), and `push_notices`, one row per task or message
 * already announced, so several instances hearing the same change send it once.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('push_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint', 'text', (c) => c.notNull().unique())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .execute();
  await db.schema
    .createTable('push_notices')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
