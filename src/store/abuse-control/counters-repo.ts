import { type Insertable, sql } from 'kysely';
import type { Db } from '../db.js';
import type { CountersTable } from '../schema.js';
import { padded, writeChunks } from '../sqlite/batches.js';
import { reusableList, reusableQuery, reusableRows } from '../sqlite/prepared.js';

/**
 * Fixed-window counters in the store, shared by every instance. A window is part of the key
 * (e.g. `tasks:h:<client>:2030-03-10T10`), so a new window is a new row; expired rows are swept.
 */

const consumeQuery = reusableQuery(
  (db: Db, key: string, first: number, expiresAt: string, limit: number) =>
    db
      .insertInto('counters')
      .values({ key, count: first, expires_at: expiresAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql<number>`counters.count + 1` }).where('counters.count', '<', limit))
      .returning('count'),
  '\u0000key',
  -1.5,
  '\u0000expires_at',
  -2.5,
);

/**
 * Adds one to `key` unless it has reached `limit`, atomically (a single upsert, so two instances
 * racing on PostgreSQL cannot both take the last unit). Returns the new count, or null when the
 * limit was already reached.
 */
export async function consumeCounter(db: Db, key: string, limit: number, expiresAt: string): Promise<number | null> {
  if (limit <= 0) return null;
  const { rows } = await db.executeQuery(consumeQuery(db, key, 1, expiresAt, limit));
  const row = rows[0];
  return row ? Number(row.count) : null;
}

/**
 * Adds `units` to `key` only if the total stays at or under `limit`, atomically (one upsert, as
 * consumeCounter). True when the whole block was taken; false takes nothing.
 */
export async function consumeCounterBlock(db: Db, key: string, units: number, limit: number, expiresAt: string): Promise<boolean> {
  if (units <= 0 || units > limit) return false;
  const rows = await db
    .insertInto('counters')
    .values({ key, count: units, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ count: sql<number>`counters.count + ${units}` })
        .where(sql<boolean>`counters.count + ${units} <= ${limit}`),
    )
    .returning('count')
    .execute();
  return rows.length > 0;
}

/** Adds `by` to `key` with no limit (refusal counts, sent-mail counts). Returns the new count. */
export async function incrementCounter(db: Db, key: string, expiresAt: string, by = 1): Promise<number> {
  const row = await db
    .insertInto('counters')
    .values({ key, count: by, expires_at: expiresAt })
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql<number>`counters.count + ${by}` }))
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The counters of a list of keys, compiled once per list length (prepared.ts). */
const readCountersQuery = reusableList((db, keys) =>
  db
    .selectFrom('counters')
    .select(['key', 'count'])
    .where('key', 'in', keys as string[]),
);

export async function readCounters(db: Db, keys: string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.executeQuery(readCountersQuery(db, padded(keys)));
  return new Map(rows.map((r) => [r.key, Number(r.count)]));
}

/** Deletes up to `limit` counters whose window has ended; returns how many. */
export async function sweepExpiredCounters(db: Db, now: string, limit = 10_000): Promise<number> {
  const result = await db
    .deleteFrom('counters')
    .where('key', 'in', (eb) => eb.selectFrom('counters').select('key').where('expires_at', '<', now).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The upsert of counters, compiled once per row count (prepared.ts). */
const addCountsQuery = reusableRows(['key', 'count', 'expires_at'], (db, rows) =>
  db
    .insertInto('counters')
    .values(rows as Insertable<CountersTable>[])
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql<number>`counters.count + excluded.count` }))
    .returning(['key', 'count']),
);

/**
 * Adds each count to its key (the read limiter's flush, a batch of submissions) and returns the
 * new totals: one upsert, or on SQLite one per chunk of a few fixed sizes (batches.ts). The keys
 * must be distinct.
 */
export async function addCounts(db: Db, counts: { key: string; count: number; expiresAt: string }[]): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  for (const chunk of writeChunks(db, counts, 3)) {
    const rows = await addCountsQuery(
      db,
      chunk.map((c) => ({ key: c.key, count: c.count, expires_at: c.expiresAt })),
    );
    for (const row of rows) totals.set(row.key, Number(row.count));
  }
  return totals;
}

export async function deleteCounters(db: Db, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('counters').where('key', 'in', padded(keys)).execute();
}
