import { type Kysely, sql } from 'kysely';
import { taskIdMentions } from '../../domain/ids.js';

/**
 * Costs that do not grow with history (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28).
 *
 * - `task_counts`: the number of tasks per status (scope `all`), per creation day and status (scope
 *   `YYYY-MM-DD`), and of submitted tasks the operator has not opened (scope `unseen`),
 *   kept by the store functions that insert tasks or change their status, in the transaction of
 *   the change (tasks-repo.ts, task-counts-repo.ts). Filled here once from the tasks stored so far.
 * - `message_tasks`: which message names which task, so a task page finds its messages by index
 *   instead of a LIKE over every message. Filled here once from `messages.task_ids`.
 * - The queue's indexes end with `id`, its keyset's tie-break, so a page is a walk down one index
 *   that stops after `limit` rows (no sort of every match); the test filter has its own.
 * - Retention finds the next batch of final tasks to erase by when they became final, through a
 *   partial index on that instant (null until final) holding only tasks not yet erased; and the
 *   finished webhook events to delete by status and age.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('task_counts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_counts_pk', ['scope', 'status'])
    .execute();
  await sql`insert into task_counts (scope, status, count)
    select 'all', status, count(*) from tasks group by status
    union all
    select substr(created_at, 1, 10), status, count(*) from tasks group by substr(created_at, 1, 10), status
    union all
    select 'unseen', 'submitted', count(*) from tasks where status = 'submitted' and seen_by_operator_at is null`.execute(db);

  await db.schema
    .createTable('message_tasks')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_tasks_pk', ['task_id', 'created_at', 'message_id'])
    .execute();
  let after = '';
  for (;;) {
    const rows = (await db.selectFrom('messages').select(['id', 'task_ids', 'created_at']).where('id', '>', after).orderBy('id').limit(1000).execute()) as {
      id: string;
      task_ids: string;
      created_at: string;
    }[];
    const links = rows.flatMap((row) => namedTasks(row.task_ids).map((task_id) => ({ task_id, message_id: row.id, created_at: row.created_at })));
    if (links.length > 0)
      await db
        .insertInto('message_tasks')
        .values(links)
        .onConflict((oc) => oc.doNothing())
        .execute();
    const last = rows.at(-1);
    if (!last || rows.length < 1000) break;
    after = last.id;
  }

  await db.schema.dropIndex('tasks_status_created_idx').execute();
  await db.schema.createIndex('tasks_queue_idx').on('tasks').columns(['status', 'created_at', 'id']).execute();
  await db.schema.createIndex('tasks_test_queue_idx').on('tasks').columns(['is_test', 'status', 'created_at', 'id']).execute();
  // The expression is written exactly as tasks-repo.ts's finalTasksToErase writes it: a planner
  // uses an expression index only for the same expression.
  await sql`create index tasks_erase_due_idx on tasks ((case when status in ('delivered', 'rejected') then coalesce(delivered_at, rejected_at, updated_at) end))
    where erased_at is null`.execute(db);
  await db.schema.dropIndex('tasks_erasure_idx').execute();
  await db.schema.createIndex('webhook_outbox_finished_idx').on('webhook_outbox').columns(['status', 'created_at']).execute();
}

/** The task ids a stored message names (its JSON list; the text again if the list is unreadable). */
function namedTasks(taskIds: string): string[] {
  try {
    const ids = JSON.parse(taskIds) as unknown;
    return Array.isArray(ids) ? [...new Set(ids.filter((id): id is string => typeof id === 'string'))] : [];
  } catch {
    return taskIdMentions(taskIds).own;
  }
}
