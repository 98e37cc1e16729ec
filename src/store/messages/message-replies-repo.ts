import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { MessageRepliesTable } from '../schema.js';

export type MessageReplyRow = Selectable<MessageRepliesTable>;

export async function insertReply(db: Db, row: Insertable<MessageRepliesTable>): Promise<void> {
  await db.insertInto('message_replies').values(row).execute();
}

/** The replies to each of `messageIds`, oldest first (a conversation reads top to bottom). */
export async function repliesTo(db: Db, messageIds: readonly string[]): Promise<Map<string, MessageReplyRow[]>> {
  const byMessage = new Map<string, MessageReplyRow[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db
    .selectFrom('message_replies')
    .selectAll()
    .where('message_id', 'in', [...messageIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const row of rows) byMessage.set(row.message_id, [...(byMessage.get(row.message_id) ?? []), row]);
  return byMessage;
}
