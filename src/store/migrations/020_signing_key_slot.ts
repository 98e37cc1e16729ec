import type { Kysely } from 'kysely';

/**
 * At most one active receipt-signing key, enforced by the store: the active key holds
 * `active_slot = 'active'`, retired keys hold NULL (NULLs never collide in a unique index on
 * either store). Two instances starting at once both try to insert a key; one wins, the other
 * reads the winner.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_keys').addColumn('active_slot', 'text').execute();
  // Keys created before this migration: the newest unretired one becomes the active key.
  const newest = await db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).orderBy('created_at', 'desc').executeTakeFirst();
  if (newest) await db.updateTable('signing_keys').set({ active_slot: 'active' }).where('kid', '=', newest.kid).execute();
  await db.schema.createIndex('signing_keys_active_idx').on('signing_keys').column('active_slot').unique().execute();
}
