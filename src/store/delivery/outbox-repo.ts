import { type Insertable, type Selectable, sql } from 'kysely';
import { type Db, type DialectName, withTransaction } from '../db.js';
import type { OutboxTable } from '../schema.js';
import { padded, writeChunks } from '../sqlite/batches.js';
import { reusableList, reusableRows } from '../sqlite/prepared.js';
import { claimDue, finishClaim } from './leased-queue.js';

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

/** Every column of the outbox table; the check below fails to compile when one is missing. */
const OUTBOX_COLUMNS = [
  'id',
  'kind',
  'recipient',
  'reply_to',
  'subject',
  'text_body',
  'html_body',
  'task_id',
  'message_id',
  'status',
  'attempts',
  'next_attempt_at',
  'locked_until',
  'last_error',
  'created_at',
  'sent_at',
  'in_reply_to',
  'claim_rank',
  'claim_token',
] as const satisfies readonly (keyof OutboxTable)[];
const allColumnsListed: Exclude<keyof OutboxTable, (typeof OUTBOX_COLUMNS)[number]> extends never ? true : never = true;
void allColumnsListed;

/** The insert of mails (one already queued wins), reused per row count (prepared.ts), without and with the ids back. */
const insertMails = (db: Db, rows: Record<(typeof OUTBOX_COLUMNS)[number], unknown>[]) =>
  db
    .insertInto('outbox')
    .values(rows as Insertable<OutboxTable>[])
    .onConflict((oc) => oc.column('id').doNothing());
const insertOutboxQuery = reusableRows(OUTBOX_COLUMNS, insertMails);
const insertOutboxReturningQuery = reusableRows(OUTBOX_COLUMNS, (db, rows) => insertMails(db, rows).returning('id'));

/**
 * Queues mails; a row with the same id already queued wins (mails that must exist at most once).
 * One statement, or on SQLite one per chunk of a few fixed sizes (batches.ts). Returns the ids of
 * the rows written (not those already queued), or with `ids: false` an empty set (the statement
 * then returns nothing).
 */
export async function insertOutbox(
  db: Db,
  rows: Insertable<OutboxTable> | Insertable<OutboxTable>[],
  options: { ids: boolean } = { ids: true },
): Promise<Set<string>> {
  const written = new Set<string>();
  for (const chunk of writeChunks(db, Array.isArray(rows) ? rows : [rows], OUTBOX_COLUMNS.length)) {
    if (!options.ids) await insertOutboxQuery(db, chunk);
    else for (const { id } of await insertOutboxReturningQuery(db, chunk)) written.add(id);
  }
  return written;
}

/** Claims up to `limit` rows due at `at` (store/delivery/leased-queue.ts): lower `claim_rank` first. */
export async function claimDueOutbox(
  store: { db: Db; dialect: DialectName },
  at: string,
  lease: { locked_until: string; claim_token: string },
  limit: number,
  order: ClaimOrder,
): Promise<OutboxRow[]> {
  return claimDue(store, 'outbox', at, lease, limit, { ranks: order.ranks, ...(order.onlyKinds !== undefined ? { kinds: order.onlyKinds } : {}) });
}

/** The claim's priority order and an optional filter by kind. */
export interface ClaimOrder {
  /** The `claim_rank` values to claim, in order (every rank a row can have). */
  ranks: readonly number[];
  /** Claim only rows of these kinds. */
  onlyKinds?: readonly string[];
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
      .execute();
  });
}

/** Writes the outcome of a claimed, still pending row and releases the lease; false when the claim was lost. */
export async function updateClaimedOutbox(db: Db, id: string, token: string, changes: Partial<OutboxTable>): Promise<boolean> {
  return finishClaim(db, 'outbox', id, token, changes);
}

/** Ids per statement when marking many rows at once (well under every store's parameter limit). */
const MARK_CHUNK = 512;

/**
 * The mark, compiled once per list length (prepared.ts). Its list is padded to a power of two
 * (batches.ts): a window's marks come in any number, and a text per number churned SQLite's
 * statement cache (each new text prepared again, and pushing out the others).
 */
const markSentQuery = reusableList(
  (db, ids, token: string, at: string) =>
    db
      .updateTable('outbox')
      .set({
        status: sql<string>`'sent'`,
        sent_at: at,
        attempts: sql<number>`attempts + 1`,
        last_error: sql<null>`null`,
        locked_until: sql<null>`null`,
        claim_token: sql<null>`null`,
      })
      .where('id', 'in', ids as string[])
      .where('claim_token', '=', token)
      .returning('id'),
  '\u0000token',
  '\u0000at',
);

/**
 * Marks claimed, still pending rows sent at `at` and releases their leases, in one statement per
 * 512 rows; returns the ids it marked (a row missing from it had lost its claim).
 */
export async function markClaimedOutboxSent(db: Db, ids: string[], token: string, at: string): Promise<Set<string>> {
  const marked = new Set<string>();
  for (let i = 0; i < ids.length; i += MARK_CHUNK) {
    const { rows } = await db.executeQuery(markSentQuery(db, padded(ids.slice(i, i + MARK_CHUNK)), token, at));
    for (const row of rows) marked.add(row.id);
  }
  return marked;
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

/** Deletes up to `limit` sent rows sent before `before` (failed rows stay until the operator acts); returns how many. */
export async function deleteSentOutboxBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('id', 'in', (eb) => eb.selectFrom('outbox').select('id').where('status', '=', 'sent').where('sent_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
