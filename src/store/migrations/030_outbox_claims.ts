import type { Kysely } from 'kysely';

/**
 * The outbox worker's claim: `claim_token` names the worker run that holds a row's lease
 * (`locked_until`), so a worker whose lease expired and was taken over cannot mark the row sent
 * or failed behind the new holder's back. The created_at index serves the operator's newest-first
 * outbox list.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('claim_token', 'text').execute();
  await db.schema.createIndex('outbox_created_idx').on('outbox').columns(['created_at', 'id']).execute();
}
