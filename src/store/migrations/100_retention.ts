import type { Kysely } from 'kysely';

// Retention (services/runtime/retention.ts): when a task's or message's private fields were erased, so each
// run looks only at rows not yet erased (indexed), and a sent-mail index for deleting old sent rows.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('erased_at', 'text').execute();
  await db.schema.alterTable('messages').addColumn('erased_at', 'text').execute();
  await db.schema.createIndex('tasks_erasure_idx').on('tasks').columns(['erased_at', 'status']).execute();
  await db.schema.createIndex('messages_erasure_idx').on('messages').columns(['erased_at', 'created_at']).execute();
  await db.schema.createIndex('outbox_sent_idx').on('outbox').columns(['status', 'sent_at']).execute();
}
