import type { Kysely } from 'kysely';

/**
 * Fewer index pages per submission (issue 28). Every index of `tasks` takes an entry per new task,
 * and an entry at a random place in its index dirties a page of its own that the commit writes to
 * the WAL: a batch of 32 submissions wrote ~250 pages, six random ones a task.
 *
 * - `tasks_client_idx` (client_hash, created_at) has had no reader since the per-client limits
 *   moved to `counters`: dropped.
 * - The queue's sorts by deadline and by ETA only ever walk tasks that have one (filteredTasks:
 *   `column is not null`, or `column < before`); a new task has neither, and its (status, NULL, id)
 *   entry fell at a random place by id. Partial indexes hold only tasks with a deadline or an ETA.
 * - The requester filter (`contact_email = ?`) never matches a task without an address.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_client_idx').execute();
  await db.schema.dropIndex('tasks_deadline_queue_idx').execute();
  await db.schema
    .createIndex('tasks_deadline_queue_idx')
    .on('tasks')
    .columns(['status', 'deadline_at', 'id'])
    .where((eb) => eb('deadline_at', 'is not', null))
    .execute();
  await db.schema.dropIndex('tasks_eta_queue_idx').execute();
  await db.schema
    .createIndex('tasks_eta_queue_idx')
    .on('tasks')
    .columns(['status', 'eta', 'id'])
    .where((eb) => eb('eta', 'is not', null))
    .execute();
  await db.schema.dropIndex('tasks_contact_queue_idx').execute();
  await db.schema
    .createIndex('tasks_contact_queue_idx')
    .on('tasks')
    .columns(['contact_email', 'status', 'created_at', 'id'])
    .where((eb) => eb('contact_email', 'is not', null))
    .execute();
}
