import type { Kysely } from 'kysely';

/**
 * Fewer index pages per submission (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28). Every index of `tasks` takes an entry per new task,
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
  const partial: [name: string, columns: string[], present: string][] = [
    ['tasks_deadline_queue_idx', ['status', 'deadline_at', 'id'], 'deadline_at'],
    ['tasks_eta_queue_idx', ['status', 'eta', 'id'], 'eta'],
    ['tasks_contact_queue_idx', ['contact_email', 'status', 'created_at', 'id'], 'contact_email'],
  ];
  for (const [name, columns, present] of partial) {
    await db.schema.dropIndex(name).execute();
    await db.schema
      .createIndex(name)
      .on('tasks')
      .columns(columns)
      .where((eb) => eb(present, 'is not', null))
      .execute();
  }
}
