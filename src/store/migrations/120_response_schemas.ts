import type { Kysely } from 'kysely';

/**
 * Structured answers (docs/answers.md): the task's response schema, as the agent gave it (JSON text), or
 * NULL. The structured result needs no column of its own: it is the canonical JSON kept in
 * operator_notes once a task with a schema is delivered.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('response_schema', 'text').execute();
}
