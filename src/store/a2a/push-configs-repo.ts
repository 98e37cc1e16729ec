import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { A2APushConfigsTable } from '../schema.js';

/**
 * A2A push notification configs, per task (migration 310). The primary key (task_id, id) is the
 * look-up of every read: a task has at most a handful of configs (services/a2a/push-configs.ts).
 */

export type PushConfigRow = Selectable<A2APushConfigsTable>;

/** The task's configs, oldest first. */
export async function listPushConfigRows(db: Db, taskId: string): Promise<PushConfigRow[]> {
  return db.selectFrom('a2a_push_configs').selectAll().where('task_id', '=', taskId).orderBy('created_at').orderBy('id').execute();
}

export async function findPushConfigRow(db: Db, taskId: string, id: string): Promise<PushConfigRow | undefined> {
  return db.selectFrom('a2a_push_configs').selectAll().where('task_id', '=', taskId).where('id', '=', id).executeTakeFirst();
}

export async function countPushConfigs(db: Db, taskId: string): Promise<number> {
  const row = await db
    .selectFrom('a2a_push_configs')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('task_id', '=', taskId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Inserts the config, or replaces the one of the same id (its created_at is kept). */
export async function upsertPushConfig(db: Db, row: PushConfigRow): Promise<void> {
  await db
    .insertInto('a2a_push_configs')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['task_id', 'id']).doUpdateSet({ url: row.url, token: row.token, auth_scheme: row.auth_scheme, auth_credentials: row.auth_credentials }),
    )
    .execute();
}

/** Deletes the config; false when there was none. */
export async function deletePushConfigRow(db: Db, taskId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('a2a_push_configs').where('task_id', '=', taskId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Stops the notifications of a config still waiting in the webhook outbox (it was deleted): they
 * end as `gone`, as if the receiver had said 410. A delivery already under way checks the config
 * again when it starts (webhooks/deliver.ts).
 */
export async function stopPushNotifications(db: Db, taskId: string, configId: string, at: string): Promise<number> {
  const result = await db
    .updateTable('webhook_outbox')
    .set({ status: 'gone', last_error: `the push notification config was deleted at ${at}` })
    .where('task_id', '=', taskId)
    .where('push_config_id', '=', configId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The configs of the task whose receiver answered 410 Gone: they want no more notifications. */
export async function goneConfigIds(db: Db, taskId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('webhook_outbox')
    .select('push_config_id')
    .where('task_id', '=', taskId)
    .where('status', '=', 'gone')
    .where('last_status_code', '=', 410)
    .where('push_config_id', 'is not', null)
    .execute();
  return new Set(rows.map((r) => r.push_config_id as string));
}

/** Deletes the configs of tasks whose private fields are erased (retention): URL and credentials go with them. */
export async function deletePushConfigsOf(db: Db, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await db
    .deleteFrom('a2a_push_configs')
    .where('task_id', 'in', [...taskIds])
    .execute();
}
