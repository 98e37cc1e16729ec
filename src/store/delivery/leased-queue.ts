import type { Selectable, Updateable } from 'kysely';
import { type Db, type DialectName, withTransaction } from '../db.js';
import type { Database } from '../schema.js';

/**
 * The one claim mechanism of the two outboxes, mail (`outbox`) and webhooks (`webhook_outbox`):
 * a worker claims due rows under a lease (`locked_until`) and a token; every later write names
 * the token, so a worker that lost its lease (it stalled past `locked_until` and another worker
 * took the row) cannot overwrite the new holder's outcome. PostgreSQL claims with
 * `SELECT … FOR UPDATE SKIP LOCKED` in a transaction, so workers on several instances take
 * disjoint rows without waiting on each other; SQLite with one `UPDATE … WHERE id IN (SELECT …)
 * RETURNING` statement, a single write transaction that also keeps a second process on the same
 * file from claiming the same rows.
 *
 * A token is set only on a pending row, by its claim, and cleared by every write that ends the
 * claim; so `claim_token = token` alone names a claim still held. Writes to many claimed rows at
 * once name no status: beside `id IN (…)`, SQLite chose a status index for `status = 'pending'`
 * and walked every pending row (12 ms a statement behind a backlog of 10,000 mails).
 */

export type QueueTable = 'outbox' | 'webhook_outbox';

export interface ClaimOptions {
  /**
   * The mail outbox's `claim_rank` values, claimed in this order (each rank a walk down
   * outbox_claim_idx that stops after the claim's rows); without it, every due row alike.
   */
  ranks?: readonly number[];
  /** Only rows of these kinds (mail). */
  kinds?: readonly string[];
}

/** Claims up to `limit` rows due at `at` under `lease`: by rank, then oldest due, then id. */
export async function claimDue<T extends QueueTable>(
  store: { db: Db; dialect: DialectName },
  table: T,
  at: string,
  lease: { locked_until: string; claim_token: string },
  limit: number,
  options: ClaimOptions = {},
): Promise<Selectable<Database[T]>[]> {
  // Both tables have the queue's columns; the builder is typed on one of them.
  const name = table as 'outbox';
  const kinds = options.kinds === undefined ? undefined : [...options.kinds];
  const due = (db: Db, rank: number | undefined, max: number) =>
    db
      .selectFrom(name)
      .select('id')
      .where('status', '=', 'pending')
      .$if(rank !== undefined, (q) => q.where('claim_rank', '=', rank ?? 0))
      .where('next_attempt_at', '<=', at)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
      .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds ?? []))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(max);
  const claimOneRank = async (rank: number | undefined, max: number) =>
    store.dialect === 'postgres'
      ? await withTransaction(store.db, async (trx) => {
          const ids = (await due(trx, rank, max).forUpdate().skipLocked().execute()).map((r) => r.id);
          if (ids.length === 0) return [];
          return trx.updateTable(name).set(lease).where('id', 'in', ids).returningAll().execute();
        })
      : await store.db
          .updateTable(name)
          .set(lease)
          .where('id', 'in', due(store.db, rank, max))
          .returningAll()
          .execute();
  const claimed: Selectable<Database['outbox']>[] = [];
  for (const rank of options.ranks ?? [undefined]) {
    if (claimed.length >= limit) break;
    // RETURNING gives no order (on either store): sort as claimed.
    const rows = await claimOneRank(rank, limit - claimed.length);
    claimed.push(...rows.sort((a, b) => a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id)));
  }
  return claimed as Selectable<Database[T]>[];
}

/**
 * Writes the outcome of a claimed, still pending row and ends the claim (lease and token cleared);
 * false when the claim was lost. `changes` of `{}` gives the row back untouched.
 */
export async function finishClaim<T extends QueueTable>(db: Db, table: T, id: string, token: string, changes: Updateable<Database[T]>): Promise<boolean> {
  const result = await db
    .updateTable(table as 'outbox')
    .set({ ...(changes as Updateable<Database['outbox']>), locked_until: null, claim_token: null })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Renews the lease of a claimed, still pending row (the worker's heartbeat); false when the claim was lost. */
export async function extendLease(db: Db, table: QueueTable, id: string, token: string, lockedUntil: string): Promise<boolean> {
  return (await extendLeases(db, table, [id], token, lockedUntil)).has(id);
}

/**
 * Renews the leases of several claimed, still pending rows in one statement (claimed rows not
 * started yet); returns the ids whose claim still held.
 */
export async function extendLeases(db: Db, table: QueueTable, ids: string[], token: string, lockedUntil: string): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable(table as 'outbox')
    .set({ locked_until: lockedUntil })
    .where('id', 'in', ids)
    .where('claim_token', '=', token)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Pending rows and the creation time of the oldest one (the metrics' outbox depth and age). */
export async function pendingSummary(db: Db, table: QueueTable): Promise<{ depth: number; oldest: string | null }> {
  const row = await db
    .selectFrom(table as 'outbox')
    .select((eb) => [eb.fn.countAll<number>().as('depth'), eb.fn.min<string | null>('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return { depth: Number(row?.depth ?? 0), oldest: row?.oldest ?? null };
}
