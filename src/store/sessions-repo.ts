import type { Db } from './db.js';

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

export async function sweepRevokedSessions(db: Db, now: string): Promise<void> {
  await db.deleteFrom('revoked_sessions').where('expires_at', '<=', now).execute();
}
