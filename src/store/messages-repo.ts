import type { Insertable, Selectable } from 'kysely';
import type { Db } from './db.js';
import type { MessagesTable } from './schema.js';
import type { PagePosition } from './tasks-repo.js';

export type MessageRow = Selectable<MessagesTable>;

export async function insertMessage(db: Db, row: Insertable<MessagesTable>): Promise<void> {
  await db.insertInto('messages').values(row).execute();
}

/** Messages that name a task id, newest first (at most 100). */
export async function messagesNamingTask(db: Db, taskId: string): Promise<MessageRow[]> {
  // Callers pass only well-formed task ids ([a-z0-9-]), so the id can sit in a LIKE pattern unescaped.
  return db
    .selectFrom('messages')
    .selectAll()
    .where('task_ids', 'like', `%"${taskId}"%`)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(100)
    .execute();
}

/** Messages newest first, strictly after `after`; at most `limit` rows. */
export async function listMessageRows(db: Db, options: { after?: PagePosition | undefined; limit: number }): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll();
  const { after } = options;
  if (after)
    query = query.where((eb) => eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
}

/** Messages sent since `since` that name at least one task, newest first; at most `limit` rows. */
export async function recentMessagesNamingTasks(db: Db, since: string, limit: number): Promise<MessageRow[]> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('created_at', '>=', since)
    .where('task_ids', '!=', '[]')
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** Erases the text and addresses of up to `limit` messages received before `before`; returns how many. */
export async function eraseMessagesBefore(db: Db, before: string, at: string, limit: number): Promise<number> {
  const result = await db
    .updateTable('messages')
    .set({ message: '', reply_to: '', sender: null, subject: null, erased_at: at })
    .where('id', 'in', (eb) => eb.selectFrom('messages').select('id').where('erased_at', 'is', null).where('created_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findMessage(db: Db, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}
