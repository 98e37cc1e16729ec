import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { IdempotencyKeysTable } from './schema.js';

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;
export type IdempotencyRecord = Omit<IdempotencyRow, 'client_hash' | 'key'>;

/** The unexpired record of this client's key, if any. */
export async function findIdempotencyRecord(db: Db, clientHash: string, key: string, now: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status_code', 'location', 'body'])
    .where('client_hash', '=', clientHash)
    .where('key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Inserts the record, overwriting an expired record of the same key. False when a live record of
 * the key exists (the caller refuses the request).
 */
export async function saveIdempotencyRecord(db: Db, clientHash: string, key: string, record: IdempotencyRecord): Promise<boolean> {
  const saved = await db
    .insertInto('idempotency_keys')
    .values({ client_hash: clientHash, key, ...record })
    .onConflict((oc) => oc.columns(['client_hash', 'key']).doUpdateSet(record).where('idempotency_keys.expires_at', '<=', record.created_at))
    .returning('key')
    .executeTakeFirst();
  return saved !== undefined;
}

/**
 * Expired records are never replayed and are overwritten when their key is reused; this deletes
 * the rest. Called by the background sweeper.
 */
export async function sweepExpiredIdempotencyKeys(db: Db, now: string, limit = 10_000): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('client_hash', 'key'),
        'in',
        eb.selectFrom('idempotency_keys').select(['client_hash', 'key']).where('expires_at', '<=', now).limit(limit).$asTuple('client_hash', 'key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
