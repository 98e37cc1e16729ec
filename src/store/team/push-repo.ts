import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { PushSubscriptionsTable } from '../schema.js';

export type PushSubscriptionRow = Selectable<PushSubscriptionsTable>;

/**
 * Adds a subscription, or renews the keys of one the browser already had (same endpoint); the
 * device then belongs to whoever subscribed it last (`operator_id`, null for the owner).
 */
export async function upsertSubscription(db: Db, row: PushSubscriptionRow): Promise<void> {
  await db
    .insertInto('push_subscriptions')
    .values(row)
    .onConflict((oc) => oc.column('endpoint').doUpdateSet({ p256dh: row.p256dh, auth: row.auth, operator_id: row.operator_id, last_error: null }))
    .execute();
}

/**
 * The subscriptions of these operators (`operatorIds`), or, without it, every subscription but
 * those of disabled operators (the owner's and those from before teams included).
 */
export async function listSubscriptions(db: Db, operatorIds?: readonly string[]): Promise<PushSubscriptionRow[]> {
  if (operatorIds !== undefined) {
    if (operatorIds.length === 0) return [];
    return db
      .selectFrom('push_subscriptions')
      .selectAll()
      .where('operator_id', 'in', [...operatorIds])
      .orderBy('created_at')
      .execute();
  }
  return db
    .selectFrom('push_subscriptions')
    .leftJoin('operators', 'operators.id', 'push_subscriptions.operator_id')
    .selectAll('push_subscriptions')
    .where((eb) => eb.or([eb('push_subscriptions.operator_id', 'is', null), eb('operators.disabled', '=', 0)]))
    .orderBy('push_subscriptions.created_at')
    .execute();
}

export async function countSubscriptions(db: Db): Promise<number> {
  const row = await db.selectFrom('push_subscriptions').select(db.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function deleteSubscription(db: Db, endpoint: string): Promise<boolean> {
  const result = await db.deleteFrom('push_subscriptions').where('endpoint', '=', endpoint).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function noteSubscriptionError(db: Db, endpoint: string, error: string): Promise<void> {
  await db
    .updateTable('push_subscriptions')
    .set({ last_error: error.slice(0, 300) })
    .where('endpoint', '=', endpoint)
    .execute();
}

/** Claims the right to announce `key` (true once, across every instance on the store). */
export async function claimNotice(db: Db, key: string, at: string): Promise<boolean> {
  const result = await db
    .insertInto('push_notices')
    .values({ key, created_at: at })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function sweepNotices(db: Db, before: string, limit = 10_000): Promise<number> {
  const result = await db
    .deleteFrom('push_notices')
    .where('key', 'in', (eb) => eb.selectFrom('push_notices').select('key').where('created_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
