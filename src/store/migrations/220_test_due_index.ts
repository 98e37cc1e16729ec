import type { Kysely } from 'kysely';

/**
 * The queue's default order, due first (docs/questions.md), with the test-task filter (docs/import.md): one walk
 * per status down (is_test, status, due_at, id) that stops after a page, as the other orders walk
 * tasks_test_queue_idx. Without it the page filtered is_test row by row along tasks_status_due_idx.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('tasks_test_due_idx').on('tasks').columns(['is_test', 'status', 'due_at', 'id']).execute();
}
