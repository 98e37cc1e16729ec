import type { Kysely } from 'kysely';

/**
 * Verified agents (issue 53, docs/verified-agents.md).
 *
 * - `tasks.agent_key_id` / `tasks.agent_directory`: the Web Bot Auth key (RFC 7638 thumbprint) and
 *   directory host that signed the submission, NULL when unsigned. "My tasks" pages one agent's
 *   tasks newest update first down a partial index (unsigned tasks take no entry), so a page costs
 *   its own rows whatever the history.
 * - `agent_nonces`: each signature `nonce` seen, until its signature's window is over: a nonce is
 *   single-use within the window on every instance (the primary key decides the race).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('agent_key_id', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('agent_directory', 'text').execute();
  await db.schema
    .createIndex('tasks_agent_updated_idx')
    .on('tasks')
    .columns(['agent_key_id', 'updated_at', 'id'])
    .where((eb) => eb('agent_key_id', 'is not', null))
    .execute();
  await db.schema
    .createTable('agent_nonces')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_nonces_expires_idx').on('agent_nonces').column('expires_at').execute();
}
