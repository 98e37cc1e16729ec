import type { Insertable, Selectable } from 'kysely';
import type { Db } from './db.js';
import type { MessagesTable } from './schema.js';

export type MessageRow = Selectable<MessagesTable>;

export async function insertMessage(db: Db, row: Insertable<MessagesTable>): Promise<void> {
  await db.insertInto('messages').values(row).execute();
}

export async function findMessage(db: Db, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}
