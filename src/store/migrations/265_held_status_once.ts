import { type Kysely, sql } from 'kysely';

/**
 * One held change of status per task, kept by the store (docs/inbox.md#undo): a unique index on
 * `held_actions (task_id)` over the rows that change a status (every kind but `reply`). The
 * console's check-then-insert let two instances each hold one (accepted, then rejected: two mails,
 * two webhooks); now the second insert conflicts, whichever instance makes it. Rows that a race
 * already doubled keep the first to commit.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    DELETE FROM held_actions
    WHERE kind <> 'reply' AND EXISTS (
      SELECT 1 FROM held_actions first
      WHERE first.task_id = held_actions.task_id AND first.kind <> 'reply'
        AND (first.commit_at < held_actions.commit_at OR (first.commit_at = held_actions.commit_at AND first.id < held_actions.id))
    )`.execute(db);
  await db.schema.createIndex('held_actions_status_once_idx').on('held_actions').column('task_id').unique().where(sql.ref('kind'), '<>', 'reply').execute();
}
