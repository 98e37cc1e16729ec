import { OUTBOX_LIST_DEFAULT, OUTBOX_LIST_MAX, OUTBOX_STATUSES, type OutboxStatus } from '../../domain/tasks/admin-schemas.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { withTransaction } from '../../store/db.js';
import { countOutboxByStatus, findOutboxRow, type ListedOutboxRow, listOutboxRows, requeueFailedOutbox } from '../../store/delivery/outbox-repo.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';

/**
 * The operator's view of the outbox (admin API and console): what is pending, what went out, what
 * failed and why, and a retry for the failed ones. Bodies are not listed: they can be long and the
 * list is for triage.
 */

export { OUTBOX_LIST_DEFAULT, OUTBOX_LIST_MAX, OUTBOX_STATUSES, type OutboxStatus } from '../../domain/tasks/admin-schemas.js';

export interface OutboxEntry {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  status: OutboxStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  next_attempt_at: string;
  task_id: string | null;
  message_id: string | null;
}

export interface ListOutboxOptions {
  status?: OutboxStatus;
  limit?: number;
}

function toEntry(row: ListedOutboxRow): OutboxEntry {
  return { ...row, status: row.status as OutboxStatus, attempts: Number(row.attempts) };
}

/** Outbox rows, newest first, optionally of one status. `limit` is clamped to 1..200 (default 50). */
export async function listOutbox(deps: ServiceDeps, options: ListOutboxOptions = {}): Promise<OutboxEntry[]> {
  const requested = options.limit !== undefined && Number.isFinite(options.limit) ? Math.trunc(options.limit) : OUTBOX_LIST_DEFAULT;
  const limit = Math.min(OUTBOX_LIST_MAX, Math.max(1, requested));
  const rows = await listOutboxRows(deps.store.db, { status: options.status, limit });
  return rows.map(toEntry);
}

/** One outbox row, or undefined. */
export async function getOutboxEntry(deps: ServiceDeps, id: string): Promise<OutboxEntry | undefined> {
  const row = await findOutboxRow(deps.store.db, id);
  return row ? toEntry(row) : undefined;
}

/** How many mails are in each state (for the console's summary). */
export async function countOutbox(deps: ServiceDeps): Promise<Record<OutboxStatus, number>> {
  const rows = await countOutboxByStatus(deps.store.db);
  const counts: Record<OutboxStatus, number> = { pending: 0, sent: 0, failed: 0 };
  for (const [status, count] of rows) if ((OUTBOX_STATUSES as readonly string[]).includes(status)) counts[status as OutboxStatus] = count;
  return counts;
}

/**
 * Puts a failed mail back in the queue, due now, with a fresh attempt count. Returns false when
 * no failed mail has that id (unknown, or pending/sent: those need no retry).
 */
export async function retryOutbox(deps: ServiceDeps, actor: Actor, id: string): Promise<boolean> {
  // The retry and its audit entry commit together.
  const changed = await withTransaction(deps.store.db, async (trx) => {
    const entry = await findOutboxRow(trx, id);
    if (!entry || !(await requeueFailedOutbox(trx, id, iso(deps.clock.now())))) return false;
    await recordAudit(trx, deps, { actor, action: 'outbox.retried', taskId: entry.task_id, details: { outbox_id: id, kind: entry.kind } });
    return true;
  });
  if (changed) {
    deps.log.info({ outbox_id: id }, 'outbox: failed mail queued again by the operator');
    deps.outboxWake.wake();
  }
  return changed;
}
