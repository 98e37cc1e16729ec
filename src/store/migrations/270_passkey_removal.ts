import type { Kysely } from 'kysely';

/**
 * A passkey can be removed (docs/team.md, "Sign-in"): it is marked, not deleted, so the audit log and any
 * signature it made keep naming a key that can still be looked up. A removed passkey no longer
 * signs in, and the console sessions it opened end (a session names the credential it was opened
 * with and reads it on every request).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operator_passkeys').addColumn('removed_at', 'text').execute();
}
