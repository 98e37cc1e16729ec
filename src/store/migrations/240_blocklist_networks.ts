import type { Kysely } from 'kysely';

/**
 * An ip entry names the prefix it blocks (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): `prefix_bits` is null for one client (the
 * client hash: IPv4 /32, IPv6 /64) and the network's bits otherwise. Matching used to hash every
 * network a client is in (24 for IPv4, 48 for IPv6: one HMAC each, on every submission from a new
 * address) in case a block named one; now a client's networks are hashed only at the prefixes
 * active entries name, which are read through the partial index below.
 *
 * An entry stored before this migration holds only a hash, so its prefix cannot be known: `-1`
 * matches it against every network, as before. Automatic blocks always name one client, so they
 * (most entries, and the ones that pile up under abuse) are known to be null.
 *
 * Automatic blocks pile up under abuse, so the list and retention's sweep of expired entries read
 * the table through indexes too: the list pages newest first down (created_at, id), the sweep
 * walks expires_at.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('blocklist').addColumn('prefix_bits', 'integer').execute();
  await db.updateTable('blocklist').set({ prefix_bits: -1 }).where('kind', '=', 'ip').where('source', '!=', 'auto').execute();
  await db.schema
    .createIndex('blocklist_networks_idx')
    .on('blocklist')
    .columns(['kind', 'prefix_bits'])
    .where((eb) => eb('prefix_bits', 'is not', null))
    .execute();
  await db.schema.createIndex('blocklist_created_idx').on('blocklist').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('blocklist_expires_idx').on('blocklist').column('expires_at').execute();
}
