import type { Selectable } from 'kysely';
import { iso } from '../domain/time.js';
import type { ServiceDeps } from '../services/deps.js';
import type { OutboxTable } from '../store/schema.js';

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
export async function claimDue(deps: ServiceDeps, token: string, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  const now = deps.clock.now();
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
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(limit),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id));
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
