import { type Insertable, type Selectable, sql } from 'kysely';
import { type Db, type DialectName, withTransaction } from './db.js';
import type { OutboxTable } from './schema.js';

/**
 * Every query of the `outbox` table. A claim takes a lease (`locked_until`) under a token: every
 * later write names the token, so a worker that lost its lease (it stalled past `locked_until` and
 * another worker took the row) cannot overwrite the new holder's outcome.
 */

export type OutboxRow = Selectable<OutboxTable>;

/** The columns the operator's listing shows (bodies are left out: they can be long). */
const LISTED = [
  'id',
  'kind',
  'recipient',
  'subject',
  'status',
  'attempts',
  'last_error',
  'created_at',
  'sent_at',
  'next_attempt_at',
  'task_id',
  'message_id',
] as const;
export type ListedOutboxRow = Pick<OutboxRow, (typeof LISTED)[number]>;

/** Queues mails; a row with the same id already queued wins (mails that must exist at most once). */
export async function insertOutbox(db: Db, rows: Insertable<OutboxTable> | Insertable<OutboxTable>[]): Promise<void> {
  if (Array.isArray(rows) && rows.length === 0) return;
  await db
    .insertInto('outbox')
    .values(rows)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Claims up to `limit` rows due at `at`. PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED` in a
 * transaction, so concurrent workers on several instances take disjoint rows without waiting on each
 * other. SQLite: one `UPDATE … WHERE id IN (SELECT …) RETURNING` statement, which runs as a single
 * write transaction on the store's one connection (and takes SQLite's write lock, so a second
 * process on the same file cannot claim the same rows either).
 */
export async function claimDueOutbox(
  store: { db: Db; dialect: DialectName },
  at: string,
  lease: { locked_until: string; claim_token: string },
  limit: number,
  order: ClaimOrder = { laterKinds: [] },
): Promise<OutboxRow[]> {
  const db = store.db;
  // Rows of `laterKinds` (operator notifications) come after every other due row; then oldest first.
  const later = [...order.laterKinds];
  const rank = later.length === 0 ? sql<number>`0` : sql<number>`case when kind in (${sql.join(later)}) then 1 else 0 end`;
  const kinds = order.onlyKinds === undefined ? undefined : [...order.onlyKinds];
  if (store.dialect === 'postgres') {
    return withTransaction(db, async (trx) => {
      const due = await trx
        .selectFrom('outbox')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
        .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds ?? []))
        .orderBy(rank)
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (due.length === 0) return [];
      return trx
        .updateTable('outbox')
        .set(lease)
        .where(
          'id',
          'in',
          due.map((r) => r.id),
        )
        .returningAll()
        .execute();
    });
  }
  const rows = await db
    .updateTable('outbox')
    .set(lease)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('outbox')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', at)
        .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', at)]))
        .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds ?? []))
        .orderBy(rank)
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(limit),
    )
    .returningAll()
    .execute();
  const rankOf = (row: OutboxRow) => (later.includes(row.kind) ? 1 : 0);
  return rows.sort((a, b) => rankOf(a) - rankOf(b) || a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id));
}

/** The claim's priority order and an optional filter by kind. */
export interface ClaimOrder {
  /** Kinds claimed only after every other due row (operator notifications). */
  laterKinds: readonly string[];
  /** Claim only rows of these kinds. */
  onlyKinds?: readonly string[];
}

/** Renews the lease of a claimed, still pending row (the worker's heartbeat); false when the claim was lost. */
export async function extendOutboxLease(db: Db, id: string, token: string, lockedUntil: string): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ locked_until: lockedUntil })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces claimed rows by one new row (a digest), in one transaction: the new row is queued and the
 * claimed ones are marked sent with `note` in last_error, so nothing is lost and nothing sent twice.
 */
export async function replaceClaimedOutbox(
  db: Db,
  token: string,
  ids: string[],
  replacement: Insertable<OutboxTable>,
  at: string,
  note: string,
): Promise<void> {
  await withTransaction(db, async (trx) => {
    await trx.insertInto('outbox').values(replacement).execute();
    await trx
      .updateTable('outbox')
      .set({ status: 'sent', sent_at: at, last_error: note, locked_until: null, claim_token: null })
      .where('id', 'in', ids)
      .where('claim_token', '=', token)
      .where('status', '=', 'pending')
      .execute();
  });
}

/** Writes the outcome of a claimed, still pending row and releases the lease; false when the claim was lost. */
export async function updateClaimedOutbox(db: Db, id: string, token: string, changes: Partial<OutboxTable>): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ ...changes, locked_until: null, claim_token: null })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Rows newest first, optionally of one status. */
export async function listOutboxRows(db: Db, options: { status?: string | undefined; limit: number }): Promise<ListedOutboxRow[]> {
  let query = db.selectFrom('outbox').select(LISTED).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit);
  if (options.status !== undefined) query = query.where('status', '=', options.status);
  return query.execute();
}

export async function findOutboxRow(db: Db, id: string): Promise<ListedOutboxRow | undefined> {
  return db.selectFrom('outbox').select(LISTED).where('id', '=', id).executeTakeFirst();
}

/** How many rows are in each status. */
export async function countOutboxByStatus(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('outbox')
    .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.count)]));
}

/** Puts a failed row back in the queue, due at `at`, with a fresh attempt count; false when no failed row has that id. */
export async function requeueFailedOutbox(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ status: 'pending', attempts: 0, next_attempt_at: at, locked_until: null })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Pending rows and the creation time of the oldest one (the metrics' outbox depth and age). */
export async function pendingOutboxSummary(db: Db): Promise<{ depth: number; oldest: string | null }> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('depth'), eb.fn.min<string | null>('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return { depth: Number(row?.depth ?? 0), oldest: row?.oldest ?? null };
}

/** Deletes up to `limit` sent rows sent before `before` (failed rows stay until the operator acts); returns how many. */
export async function deleteSentOutboxBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('id', 'in', (eb) => eb.selectFrom('outbox').select('id').where('status', '=', 'sent').where('sent_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
