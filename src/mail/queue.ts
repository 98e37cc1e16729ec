import { sql, type Insertable, type Selectable } from 'kysely';
import { iso } from '../domain/time.js';
import type { ServiceDeps } from '../services/deps.js';
import type { OutboxTable } from '../store/schema.js';
import { NOTIFICATION_KINDS } from './priority.js';

/**
 * The outbox worker's store operations. A claim takes a lease (`locked_until`) under a token:
 * every later write names the token, so a worker that lost its lease (it stalled past
 * `locked_until` and another worker took the row) cannot overwrite the new holder's outcome.
 */

export type OutboxRow = Selectable<OutboxTable>;

/**
 * Claims up to `limit` due mails. PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED` in a transaction,
 * so concurrent workers on several instances take disjoint rows without waiting on each other.
 * SQLite: one `UPDATE … WHERE id IN (SELECT …) RETURNING` statement, which runs as a single
 * write transaction on the store's one connection (and takes SQLite's write lock, so a second
 * process on the same file cannot claim the same rows either).
 */
export async function claimDue(deps: ServiceDeps, token: string, limit: number, leaseMs: number, onlyKinds?: readonly string[]): Promise<OutboxRow[]> {
  const now = deps.clock.now();
  // Requester mail first (0), operator notifications after (1); then oldest due first.
  const rank = sql<number>`case when kind in (${sql.join([...NOTIFICATION_KINDS])}) then 1 else 0 end`;
  const kinds = onlyKinds === undefined ? undefined : [...onlyKinds];
  const at = iso(now);
  const lease = { locked_until: iso(new Date(now.getTime() + leaseMs)), claim_token: token };
  const db = deps.store.db;
  if (deps.store.dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
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
  return rows.sort((a, b) => priorityOf(a) - priorityOf(b) || a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id));
}

function priorityOf(row: OutboxRow): number {
  return NOTIFICATION_KINDS.includes(row.kind) ? 1 : 0;
}

/** The heartbeat: while a mail is being sent its lease is renewed, so only a dead worker's claim expires. */
export async function extendLease(deps: ServiceDeps, row: OutboxRow, token: string, leaseMs: number): Promise<boolean> {
  const result = await deps.store.db
    .updateTable('outbox')
    .set({ locked_until: iso(new Date(deps.clock.now().getTime() + leaseMs)) })
    .where('id', '=', row.id)
    .where('claim_token', '=', token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces claimed notifications by one digest mail, in one transaction: the digest row is queued
 * and the bundled rows are marked sent (their `last_error` names the digest), so nothing is lost
 * and nothing is sent twice.
 */
export async function bundleIntoDigest(deps: ServiceDeps, token: string, rows: OutboxRow[], digest: Insertable<OutboxTable>): Promise<void> {
  const at = iso(deps.clock.now());
  await deps.store.db.transaction().execute(async (trx) => {
    await trx.insertInto('outbox').values(digest).execute();
    await trx
      .updateTable('outbox')
      .set({ status: 'sent', sent_at: at, last_error: `bundled into digest ${digest.id}`, locked_until: null, claim_token: null })
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .where('claim_token', '=', token)
      .where('status', '=', 'pending')
      .execute();
  });
}

function held(row: OutboxRow, token: string) {
  return { id: row.id, token };
}

async function update(deps: ServiceDeps, where: { id: string; token: string }, changes: Partial<OutboxTable>): Promise<boolean> {
  const result = await deps.store.db
    .updateTable('outbox')
    .set({ ...changes, locked_until: null, claim_token: null })
    .where('id', '=', where.id)
    .where('claim_token', '=', where.token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function markSent(deps: ServiceDeps, row: OutboxRow, token: string): Promise<boolean> {
  return update(deps, held(row, token), { status: 'sent', sent_at: iso(deps.clock.now()), attempts: Number(row.attempts) + 1, last_error: null });
}

export function scheduleRetry(deps: ServiceDeps, row: OutboxRow, token: string, error: string, dueAt: Date): Promise<boolean> {
  return update(deps, held(row, token), { attempts: Number(row.attempts) + 1, last_error: error, next_attempt_at: iso(dueAt) });
}

export function markFailed(deps: ServiceDeps, row: OutboxRow, token: string, error: string): Promise<boolean> {
  return update(deps, held(row, token), { status: 'failed', attempts: Number(row.attempts) + 1, last_error: error });
}

/** Not an attempt: the mail waits (e.g. for tomorrow's e-mail cap) with its attempt count intact. */
export function postpone(deps: ServiceDeps, row: OutboxRow, token: string, dueAt: Date): Promise<boolean> {
  return update(deps, held(row, token), { next_attempt_at: iso(dueAt) });
}

/** Gives a claimed mail back untouched (the worker is stopping before it got to it). */
export function release(deps: ServiceDeps, row: OutboxRow, token: string): Promise<boolean> {
  return update(deps, held(row, token), {});
}
