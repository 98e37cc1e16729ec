import type { Insertable } from 'kysely';
import { iso } from '../domain/time.js';
import { extendLease as extendQueueLease } from '../store/leased-queue.js';
import { claimDueOutbox, type OutboxRow, replaceClaimedOutbox, updateClaimedOutbox } from '../store/outbox-repo.js';
import type { OutboxTable } from '../store/schema.js';
import type { MailDeps } from './context.js';
import { NOTIFICATION_KINDS } from './priority.js';

/**
 * The mail worker's view of the outbox: claims under a lease and the outcome of each claimed mail
 * (the queries themselves are in store/outbox-repo.ts and store/leased-queue.ts). Every write names the claim token, so a
 * worker that lost its lease cannot overwrite the new holder's outcome.
 */

export type { OutboxRow } from '../store/outbox-repo.js';

type QueueDeps = Pick<MailDeps, 'store' | 'clock'>;

/** Claims up to `limit` due mails under this worker's token for `leaseMs`: requester mail before operator notifications. */
export async function claimDue(deps: QueueDeps, token: string, limit: number, leaseMs: number, onlyKinds?: readonly string[]): Promise<OutboxRow[]> {
  const now = deps.clock.now();
  const lease = { locked_until: iso(new Date(now.getTime() + leaseMs)), claim_token: token };
  return claimDueOutbox(deps.store, iso(now), lease, limit, { laterKinds: NOTIFICATION_KINDS, ...(onlyKinds ? { onlyKinds } : {}) });
}

/** The heartbeat: while a mail is being sent its lease is renewed, so only a dead worker's claim expires. */
export function extendLease(deps: QueueDeps, row: OutboxRow, token: string, leaseMs: number): Promise<boolean> {
  return extendQueueLease(deps.store.db, 'outbox', row.id, token, iso(new Date(deps.clock.now().getTime() + leaseMs)));
}

/** Replaces claimed notifications by one digest row, in one transaction (see replaceClaimedOutbox). */
export function bundleIntoDigest(deps: QueueDeps, token: string, rows: OutboxRow[], digest: Insertable<OutboxTable>): Promise<void> {
  return replaceClaimedOutbox(
    deps.store.db,
    token,
    rows.map((r) => r.id),
    digest,
    iso(deps.clock.now()),
    `bundled into digest ${digest.id}`,
  );
}

function update(deps: QueueDeps, row: OutboxRow, token: string, changes: Partial<OutboxTable>): Promise<boolean> {
  return updateClaimedOutbox(deps.store.db, row.id, token, changes);
}

export function markSent(deps: QueueDeps, row: OutboxRow, token: string): Promise<boolean> {
  return update(deps, row, token, { status: 'sent', sent_at: iso(deps.clock.now()), attempts: Number(row.attempts) + 1, last_error: null });
}

export function scheduleRetry(deps: QueueDeps, row: OutboxRow, token: string, error: string, dueAt: Date): Promise<boolean> {
  return update(deps, row, token, { attempts: Number(row.attempts) + 1, last_error: error, next_attempt_at: iso(dueAt) });
}

export function markFailed(deps: QueueDeps, row: OutboxRow, token: string, error: string): Promise<boolean> {
  return update(deps, row, token, { status: 'failed', attempts: Number(row.attempts) + 1, last_error: error });
}

/** Not an attempt: the mail waits (e.g. for tomorrow's e-mail cap) with its attempt count intact. */
export function postpone(deps: QueueDeps, row: OutboxRow, token: string, dueAt: Date): Promise<boolean> {
  return update(deps, row, token, { next_attempt_at: iso(dueAt) });
}

/** Gives a claimed mail back untouched (the worker is stopping before it got to it). */
export function release(deps: QueueDeps, row: OutboxRow, token: string): Promise<boolean> {
  return update(deps, row, token, {});
}
