import { type Kysely, sql } from 'kysely';

/**
 * A2A contexts (docs/a2a.md): `tasks.context_id`, the A2A `contextId` the service issues with every
 * task (`ctx-<year>-<32 hex>`); a message naming it puts its new task in the same context.
 *
 * Tasks that existed before get one context each, derived from their own id (`task-2026-ab…` →
 * `ctx-2026-ab…`): it names no other task, and whoever reads the task by its id may read it anyway.
 * ListTasks by context pages newest update first down (context_id, updated_at, id).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('context_id', 'text').execute();
  await sql`UPDATE tasks SET context_id = CASE WHEN id LIKE 'task-%' THEN 'ctx-' || substr(id, 6) ELSE 'ctx-' || id END`.execute(db);
  await db.schema.createIndex('tasks_context_updated_idx').on('tasks').columns(['context_id', 'updated_at', 'id']).execute();
}
