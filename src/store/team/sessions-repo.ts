import type { Db } from '../db.js';

/** Console sessions signed out before they expired (the `revoked_sessions` table). */

export async function isSessionRevoked(db: Db, sid: string): Promise<boolean> {
  const row = await db.selectFrom('revoked_sessions').select('sid').where('sid', '=', sid).executeTakeFirst();
  return row !== undefined;
}

/** Revokes a session id until `expiresAt` (when its cookie would stop working anyway). */
export async function revokeSession(db: Db, sid: string, expiresAt: string): Promise<void> {
  await db
    .insertInto('revoked_sessions')
    .values({ sid, expires_at: expiresAt })
    .onConflict((oc) => oc.column('sid').doNothing())
    .execute();
}

/** Forgets up to `limit` revoked sessions whose cookie has expired anyway; returns how many. */
export async function sweepRevokedSessions(db: Db, now: string, limit = 10_000): Promise<number> {
  const result = await db
    .deleteFrom('revoked_sessions')
    .where('sid', 'in', (eb) => eb.selectFrom('revoked_sessions').select('sid').where('expires_at', '<=', now).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
