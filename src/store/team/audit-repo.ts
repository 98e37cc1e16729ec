import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { AuditLogTable } from '../schema.js';

/**
 * The audit log (migration 140): append-only. There is an insert and a read here and nothing
 * else — no update, no delete — so no endpoint or job can edit what was recorded.
 */

export type AuditRow = Selectable<AuditLogTable>;

/** Appends one entry; call it with the transaction of the action it records. */
export async function insertAudit(db: Db, row: AuditRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export interface AuditFilter {
  taskId?: string | undefined;
  actor?: string | undefined;
  /** The position (at, id) of the last entry of the previous page. */
  after?: { at: string; id: string } | undefined;
  limit: number;
}

/** Newest first; each filter is one range of its index (at, id), however long the log grows. */
export async function listAuditRows(db: Db, filter: AuditFilter): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll();
  if (filter.taskId !== undefined) query = query.where('task_id', '=', filter.taskId);
  if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
  const after = filter.after;
  if (after) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}
