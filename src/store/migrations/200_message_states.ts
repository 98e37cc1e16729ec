import { type Kysely, sql } from 'kysely';

/**
 * The operator's inbox (docs/inbox.md): a message is waiting until an operator answers it or marks it
 * done. `messages.done_at` / `done_by` hold that state; `message_counts` keeps the number of waiting
 * messages (scope `waiting`), changed in the transaction of the message, the reply or the "Mark
 * done", so the count in the navigation never scans history; the partial index lists the waiting
 * messages newest first and holds only those. Messages answered before this migration count as done.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('done_at', 'text').execute();
  await db.schema.alterTable('messages').addColumn('done_by', 'text').execute();
  await sql`update messages set done_at = (select min(r.created_at) from message_replies r where r.message_id = messages.id), done_by = 'reply'
    where exists (select 1 from message_replies r where r.message_id = messages.id)`.execute(db);
  await db.schema
    .createTable('message_counts')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into message_counts (scope, count) select 'waiting', count(*) from messages where done_at is null`.execute(db);
  await sql`create index messages_waiting_idx on messages (created_at, id) where done_at is null`.execute(db);
}
