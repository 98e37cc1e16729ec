import type { Kysely } from 'kysely';
import { isTestTask } from '../../domain/tasks/test-task.js';

/**
 * Test tasks (docs/import.md): `is_test` is decided once, at submission, so the queue can filter on it
 * and the figures can leave it out. Tasks stored before this migration are classified here by
 * the same rule.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const rows = (await db.selectFrom('tasks').select(['id', 'description', 'requester']).execute()) as { id: string; description: string; requester: string }[];
  for (const row of rows) {
    if (isTestTask(row)) await db.updateTable('tasks').set({ is_test: 1 }).where('id', '=', row.id).execute();
  }
}
