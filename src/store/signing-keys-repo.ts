import type { Insertable } from 'kysely';
import type { Db } from './db.js';
import { withTransaction } from './db.js';
import type { SigningKeysTable } from './schema.js';

/** Every query of the `signing_keys` table. The active key has `active_slot = 'active'` (unique, migration 020). */

export const ACTIVE_SLOT = 'active';

export async function activeKeyRow(db: Db) {
  return db.selectFrom('signing_keys').select(['kid', 'private_jwk']).where('active_slot', '=', ACTIVE_SLOT).executeTakeFirst();
}

/** Inserts a key as the active one unless one is active already (the unique slot lets one insert win). */
export async function insertActiveKeyIfNone(db: Db, row: Insertable<SigningKeysTable>): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Retires the active key (keeping its public part, dropping its private part) and inserts `row` as
 * the active one, in one transaction. Returns the retired key's id.
 */
export async function replaceActiveKey(db: Db, row: Insertable<SigningKeysTable>, retiredAt: string): Promise<string | null> {
  return withTransaction(db, async (trx) => {
    // Write first: on SQLite a transaction that reads before it writes cannot wait for another
    // process's write (SQLITE_BUSY at once: `keys:rotate` beside a running service); a first write
    // waits for the lock like any other.
    const previous = await trx
      .updateTable('signing_keys')
      .set({ active_slot: null, retired_at: retiredAt, private_jwk: '' })
      .where('active_slot', '=', ACTIVE_SLOT)
      .returning('kid')
      .executeTakeFirst();
    await trx.insertInto('signing_keys').values(row).execute();
    return previous?.kid ?? null;
  });
}

/** Every key, newest first, without private parts. */
export async function listKeyRows(db: Db) {
  return db.selectFrom('signing_keys').select(['kid', 'public_jwk', 'created_at', 'retired_at', 'active_slot']).orderBy('created_at', 'desc').execute();
}
