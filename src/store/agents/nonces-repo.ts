import type { Db } from '../db.js';

/**
 * Signature nonces (migration 295): a nonce is claimed once; a second claim of the same nonce
 * before it expires is a replay. The primary key decides between instances.
 */

/** Claims a nonce until `expiresAt`; false when it is already claimed. */
export async function claimNonce(db: Db, nonce: string, expiresAt: string): Promise<boolean> {
  const result = await db
    .insertInto('agent_nonces')
    .values({ nonce, expires_at: expiresAt })
    .onConflict((oc) => oc.column('nonce').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Deletes up to `limit` nonces whose window ended before `now`; returns how many. */
export async function deleteExpiredNonces(db: Db, now: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('agent_nonces')
    .where('nonce', 'in', (eb) => eb.selectFrom('agent_nonces').select('nonce').where('expires_at', '<', now).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
