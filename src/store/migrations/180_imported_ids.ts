import type { Kysely } from 'kysely';

/**
 * Imported task ids by their case-folded form (docs/import.md#other-deployments-ids-issue-29): another deployment's ids may carry an
 * upper-case prefix (`HFAI-2026-…`), and a message may name one in any case. Lookups of a task stay
 * exact; only linking a message to the tasks it names goes through this table, which holds the
 * imported ids alone (the service's own ids are lower case already), so submissions never pay for it.
 * Tasks imported before this migration are entered here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('imported_task_ids')
    .addColumn('folded_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('imported_task_ids_pk', ['folded_id', 'task_id'])
    .execute();
  const rows = (await db.selectFrom('tasks').select('id').where('client_hash', '=', 'imported').execute()) as { id: string }[];
  for (const row of rows) await db.insertInto('imported_task_ids').values({ folded_id: row.id.toLowerCase(), task_id: row.id }).execute();
}
