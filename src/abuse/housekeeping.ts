import type { Db } from '../store/db.js';

/**
 * Expired idempotency records are never replayed (findStoredResponse filters on expiry) and are
 * overwritten when their key is reused; this deletes the rest. Called by the background sweeper.
 */
export async function sweepExpiredIdempotencyKeys(db: Db, now: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
}
