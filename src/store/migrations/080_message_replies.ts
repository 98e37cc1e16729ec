import type { Kysely } from 'kysely';

/**
 * Talking with the operator: the operator's replies to messages, kept so the console shows the
 * conversation, and the outbox's `in_reply_to` (a Message-ID), so a reply mail threads under the
 * message it answers in the requester's mail client (In-Reply-To and References).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('message_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('message_replies_message_idx').on('message_replies').columns(['message_id', 'created_at']).execute();
  await db.schema.alterTable('outbox').addColumn('in_reply_to', 'text').execute();
}
