import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { IdempotencyKeysTable } from '../schema.js';
import { padded, writeChunks } from '../sqlite/batches.js';

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

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

/** The unexpired records of any of these (client, key) pairs. */
export async function findIdempotencyRecords(db: Db, pairs: { clientHash: string; key: string }[], now: string): Promise<IdempotencyRow[]> {
  if (pairs.length === 0) return [];
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where((eb) => eb.or(padded(pairs).map((p) => eb.and([eb('client_hash', '=', p.clientHash), eb('key', '=', p.key)]))))
    .where('expires_at', '>', now)
    .execute();
}

/**
 * Inserts the records of a batch, each overwriting an expired record of its key, in one statement
 * (on SQLite one per chunk, batches.ts; the caller holds every key's lock, so no live record can
 * be in the way).
 */
export async function saveIdempotencyRecords(db: Db, rows: IdempotencyRow[]): Promise<void> {
  for (const chunk of writeChunks(db, rows, 9)) await saveChunk(db, chunk);
}

async function saveChunk(db: Db, rows: IdempotencyRow[]): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['client_hash', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          status_code: eb.ref('excluded.status_code'),
          location: eb.ref('excluded.location'),
          body: eb.ref('excluded.body'),
          task_id: eb.ref('excluded.task_id'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where((eb) => eb('idempotency_keys.expires_at', '<=', eb.ref('excluded.created_at'))),
    )
    .execute();
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
