import type { Kysely } from 'kysely';

// Abuse control (docs/abuse-control.md): expired idempotency records are swept by expiry, and the submission
// screen looks up active blocks by kind and value (blocklist_kind_value_idx, in 001) — nothing else
// is needed beyond 001's tables.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_expires_idx').execute();
}
