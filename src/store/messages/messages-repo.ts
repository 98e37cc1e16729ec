import type { Insertable, Selectable } from 'kysely';
import { sql } from 'kysely';
import { type Db, withTransaction } from '../db.js';
import type { MessagesTable } from '../schema.js';
import { padded } from '../sqlite/batches.js';
import type { PagePosition } from '../tasks/tasks-repo.js';

export type MessageRow = Selectable<MessagesTable>;

/**
 * Stores a message and, in the same transaction, one `message_tasks` row per task it names
 * (migration 150), so the tasks' pages find it by index.
 */
export async function insertMessage(db: Db, row: Insertable<MessagesTable>): Promise<void> {
  await withTransaction(db, async (trx) => {
    await trx.insertInto('messages').values(row).execute();
    if (!row.done_at) await addWaiting(trx, 1);
    const named = [...new Set(JSON.parse(row.task_ids) as string[])];
    if (named.length > 0)
      await trx
        .insertInto('message_tasks')
        .values(named.map((task_id) => ({ task_id, message_id: row.id, created_at: row.created_at })))
        .execute();
  });
}

/** Messages that name a task id, newest first (at most 100): a walk of message_tasks' key. */
export async function messagesNamingTask(db: Db, taskId: string): Promise<MessageRow[]> {
  return messagesNamingTasks(db, [taskId], 100);
}

/** Messages naming any of `taskIds` (a page of the queue), newest first; at most `limit`. */
export async function messagesNamingTasks(db: Db, taskIds: string[], limit: number): Promise<MessageRow[]> {
  if (taskIds.length === 0) return [];
  const links = await db
    .selectFrom('message_tasks')
    .select('message_id')
    .where('task_id', 'in', padded([...new Set(taskIds)]))
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
  const ids = [...new Set(links.map((l) => l.message_id))];
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('messages').selectAll().where('id', 'in', ids).execute();
  return rows.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
}

/** Messages newest first, strictly after `after`; at most `limit` rows (one walk of messages_created_idx). */
export async function listMessageRows(db: Db, options: { after?: PagePosition | undefined; limit: number }): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll();
  const { after } = options;
  if (after) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.created_at, after.id)));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
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

const WAITING = 'waiting';

/** Changes the kept number of waiting messages (migration 200); runs in the transaction of the change. */
async function addWaiting(db: Db, by: number): Promise<void> {
  await db
    .insertInto('message_counts')
    .values({ scope: WAITING, count: by })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ count: sql<number>`message_counts.count + excluded.count` }))
    .execute();
}

/** Messages no operator has answered or marked done: one row of the kept counts. */
export async function waitingMessageCount(db: Db): Promise<number> {
  const row = await db.selectFrom('message_counts').select('count').where('scope', '=', WAITING).executeTakeFirst();
  return Math.max(0, Number(row?.count ?? 0));
}

/**
 * Marks a waiting message done (answered, or "Mark done"); false when it was done already (or is
 * unknown). The update and the count move together, so the count never drifts from the rows.
 */
export async function markMessageDone(db: Db, id: string, at: string, by: string): Promise<boolean> {
  return withTransaction(db, async (trx) => {
    const result = await trx.updateTable('messages').set({ done_at: at, done_by: by }).where('id', '=', id).where('done_at', 'is', null).executeTakeFirst();
    const changed = Number(result.numUpdatedRows) > 0;
    if (changed) await addWaiting(trx, -1);
    return changed;
  });
}

/** Waiting messages, newest first, at most `limit`: a walk of the partial index messages_waiting_idx. */
export async function listWaitingMessageRows(db: Db, limit: number): Promise<MessageRow[]> {
  return db.selectFrom('messages').selectAll().where('done_at', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** When each of `ids` was done (null: waiting), by primary key. */
export async function messageDoneStates(db: Db, ids: readonly string[]): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'done_at'])
    .where('id', 'in', padded([...new Set(ids)]))
    .execute();
  return new Map(rows.map((r) => [r.id, r.done_at]));
}
