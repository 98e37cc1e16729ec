import type { Kysely } from 'kysely';

// Console sign-out: the cookie is stateless, so a signed-out session id is remembered until the
// session would have expired anyway, and a copy of the cookie stops working at once.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('revoked_sessions')
    .addColumn('sid', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
