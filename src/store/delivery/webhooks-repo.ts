import type { Insertable, Selectable } from 'kysely';
import type { Db, Store } from '../db.js';
import type { WebhookAttemptsTable, WebhookOutboxTable } from '../schema.js';
import { claimDue, finishClaim } from './leased-queue.js';

/**
 * The webhook outbox and its attempt log. Every write after a claim names the claim token, so a
 * worker whose lease ran out (and whose row another worker took) cannot overwrite the outcome of
 * the new holder. Claims are `FOR UPDATE SKIP LOCKED` on PostgreSQL and one `UPDATE … RETURNING`
 * statement on SQLite (as the mail outbox's), so two instances never send one event at once.
 */

export type WebhookEventRow = Selectable<WebhookOutboxTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

export const WEBHOOK_STATUSES = ['pending', 'delivered', 'failed', 'gone'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** What a caller decides of a queued event; the rest starts as every new event's (pending, due now). */
export type NewWebhookEvent = Pick<Insertable<WebhookOutboxTable>, 'id' | 'task_id' | 'event' | 'url' | 'body' | 'push_config_id'>;

/** Queues an event, due at `at`; a second event of the same kind for the same task is ignored. */
export async function insertWebhookEvent(db: Db, event: NewWebhookEvent, at: string): Promise<void> {
  const row: Insertable<WebhookOutboxTable> = {
    ...event,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    locked_until: null,
    claim_token: null,
    last_status_code: null,
    last_error: null,
    created_at: at,
    delivered_at: null,
  };
  await db
    .insertInto('webhook_outbox')
    .values(row)
    .onConflict((oc) => oc.columns(['task_id', 'event']).doNothing())
    .execute();
}

/**
 * Has the task's callback receiver answered 410 Gone (it wants no more of this task's events)? A2A
 * push notifications (push_config_id set) are their receivers' own business (store/a2a/push-configs-repo.ts).
 */
export async function taskWebhooksGone(db: Db, taskId: string): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_outbox')
    .select('id')
    .where('task_id', '=', taskId)
    .where('status', '=', 'gone')
    .where('push_config_id', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Claims up to `limit` due events for `token` until `lockedUntil` (store/delivery/leased-queue.ts). */
export async function claimDueWebhooks(
  store: Pick<Store, 'db' | 'dialect'>,
  token: string,
  limit: number,
  at: string,
  lockedUntil: string,
): Promise<WebhookEventRow[]> {
  return claimDue(store, 'webhook_outbox', at, { locked_until: lockedUntil, claim_token: token }, limit);
}

/** Records the outcome of a claimed event and drops the claim; false when the claim was lost. */
export async function finishWebhookClaim(db: Db, id: string, token: string, changes: Partial<WebhookOutboxTable>): Promise<boolean> {
  return finishClaim(db, 'webhook_outbox', id, token, changes);
}

/** Gives a claimed event back untouched (the worker is stopping before it got to it). */
export async function releaseWebhookClaim(db: Db, id: string, token: string): Promise<void> {
  await finishClaim(db, 'webhook_outbox', id, token, {});
}

export async function insertWebhookAttempt(db: Db, attempt: WebhookAttemptRow): Promise<void> {
  await db.insertInto('webhook_attempts').values(attempt).execute();
}

const LISTED = [
  'id',
  'task_id',
  'event',
  'url',
  'status',
  'attempts',
  'next_attempt_at',
  'locked_until',
  'last_status_code',
  'last_error',
  'created_at',
  'delivered_at',
] as const;
export type WebhookEventSummary = Pick<WebhookEventRow, (typeof LISTED)[number]>;

/** Events, newest first, of one task or of all; without their bodies. */
export async function listWebhookEvents(db: Db, options: { taskId?: string | undefined; limit: number }): Promise<WebhookEventSummary[]> {
  let query = db.selectFrom('webhook_outbox').select(LISTED).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit);
  if (options.taskId !== undefined) query = query.where('task_id', '=', options.taskId);
  return query.execute();
}

export async function findWebhookEvent(db: Db, id: string): Promise<WebhookEventSummary | undefined> {
  return db.selectFrom('webhook_outbox').select(LISTED).where('id', '=', id).executeTakeFirst();
}

/** The attempts of the given events, oldest first. */
export async function listWebhookAttempts(db: Db, eventIds: readonly string[]): Promise<WebhookAttemptRow[]> {
  if (eventIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('event_id', 'in', [...eventIds])
    .orderBy('at')
    .orderBy('attempt')
    .execute();
}

/**
 * Makes an undelivered event due now with a fresh attempt budget (the operator's retry). Not while
 * a worker holds it: that delivery is under way. False when nothing was changed.
 */
export async function requeueWebhookEvent(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('webhook_outbox')
    .set({ status: 'pending', attempts: 0, next_attempt_at: at, locked_until: null, claim_token: null })
    .where('id', '=', id)
    .where('status', '!=', 'delivered')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Deletes up to `limit` delivered or gone events created before `before`, with their attempt log
 * (retention); failed events stay until the operator acts. Returns how many events.
 */
export async function deleteFinishedWebhooksBefore(db: Db, before: string, limit: number): Promise<number> {
  const rows = await db
    .selectFrom('webhook_outbox')
    .select('id')
    .where('status', 'in', ['delivered', 'gone'])
    .where('created_at', '<', before)
    .limit(limit)
    .execute();
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('webhook_attempts').where('event_id', 'in', ids).execute();
  const result = await db.deleteFrom('webhook_outbox').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
