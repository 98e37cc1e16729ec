import { type Kysely, sql } from 'kysely';
import { dueOf } from '../../domain/tasks/due.js';
import { parseDateTime } from '../../domain/time.js';

const DEFAULT_RESPONSE_TARGET_HOURS = 12;

/**
 * Questions (docs/questions.md). Questions live on the task row as a JSON array (`questions`, NULL when none), so the
 * public task stays one row. `deadline_at` is the deadline as a UTC instant (the request keeps the
 * text as given, which may carry any offset and so does not sort), and `deadline_passed_at` marks
 * an accepted task whose passed deadline was announced: the sweep finds its work through a partial
 * index that holds only open tasks with a deadline not yet handled. A message keeps the hash of its
 * thread token (the token itself is shown once).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('questions', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('deadline_at', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('deadline_passed_at', 'text').execute();
  // The earlier of deadline and response target (domain/tasks/due.ts): the console queue's order.
  await db.schema.alterTable('tasks').addColumn('due_at', 'text').execute();
  await db.schema.alterTable('messages').addColumn('thread_token_hash', 'text').execute();
  // Tasks stored before: their deadline instant, so a deadline that passed meanwhile is handled at start.
  const rows = (await db.selectFrom('tasks').select(['id', 'deadline', 'created_at']).execute()) as {
    id: string;
    deadline: string | null;
    created_at: string;
  }[];
  for (const row of rows) {
    const at = row.deadline === null ? null : parseDateTime(row.deadline);
    // The response target of tasks stored before is taken at its default, 12 hours.
    const due = dueOf(row, DEFAULT_RESPONSE_TARGET_HOURS).at.toISOString();
    await db
      .updateTable('tasks')
      .set({ deadline_at: at ? at.toISOString() : null, due_at: due })
      .where('id', '=', row.id)
      .execute();
  }
  await db.schema.createIndex('tasks_status_due_idx').on('tasks').columns(['status', 'due_at', 'id']).execute();
  await sql`create index tasks_deadline_due_idx on tasks (deadline_at) where deadline_at is not null and deadline_passed_at is null and status in ('submitted', 'accepted')`.execute(
    db,
  );
}
