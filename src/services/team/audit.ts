import { randomBytes } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import { type Actor, actorName } from '../../domain/team/actor.js';
import { AUDIT_PAGE_DEFAULT, type AuditEntry, type AuditList, type AuditQuery, AuditQuerySchema } from '../../domain/team/team-schemas.js';
import { iso } from '../../domain/time.js';
import type { Db } from '../../store/db.js';
import { type AuditRow, insertAudit, listAuditRows } from '../../store/team/audit-repo.js';
import { listOperatorRows } from '../../store/team/operators-repo.js';
import { decodeCursor, nextCursor } from '../console/cursor.js';
import type { ServiceDeps } from '../context.js';
import { queryChecker } from '../tasks/validation.js';

/**
 * The audit log (contract "A team of operators"): who did what, when. `recordAudit` takes the
 * transaction of the action it records, so an action and its entry commit together or not at all.
 */

export interface AuditRecord {
  /** The actor, or a name for who is not one: "anonymous" for a failed sign-in naming nobody. */
  actor: Actor | string;
  /** A dotted name: task.accepted, signin.failed, key.created, … */
  action: string;
  taskId?: string | null | undefined;
  details?: Record<string, unknown>;
}

/**
 * Entries of one millisecond keep their order: the id sorts by a counter of this process before its
 * random part, so the log's (at, id) order is the order of recording (across instances, ties within
 * one millisecond fall in random order).
 */
let sequence = 0;
function nextId(): string {
  sequence = (sequence + 1) % 0x1_0000_0000;
  return `aud-${sequence.toString(16).padStart(8, '0')}${randomBytes(12).toString('hex')}`;
}

export async function recordAudit(db: Db, deps: Pick<ServiceDeps, 'clock'>, record: AuditRecord): Promise<void> {
  await insertAudit(db, {
    id: nextId(),
    at: iso(deps.clock.now()),
    actor: typeof record.actor === 'string' ? record.actor : actorName(record.actor),
    action: record.action,
    task_id: record.taskId ?? null,
    details: JSON.stringify(record.details ?? {}),
    // Chained by the receipt log's sequencer (services/receipt-log/receipt-log.ts), in the order it finds entries.
    hash: null,
    chain_index: null,
  });
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    at: row.at,
    actor: row.actor,
    action: row.action,
    task_id: row.task_id,
    details: JSON.parse(row.details) as Record<string, unknown>,
    hash: row.hash,
  };
}

/** Entries shown on a task page: the latest; the API pages through the rest. */
const TASK_PAGE_ENTRIES = 50;

const checkQuery = queryChecker<AuditQuery>(AuditQuerySchema);

/** `GET /api/v1/admin/audit` and the task page: newest first, filtered by task and by actor. */
export async function listAudit(deps: ServiceDeps, raw: unknown): Promise<AuditList> {
  const query = checkQuery(raw);
  const limit = query.limit ?? AUDIT_PAGE_DEFAULT;
  // A cursor is bound to its filter: carried to another it would skip entries.
  const scope = `audit:${query.task_id ?? ''}:${query.operator_id ?? ''}`;
  const position = query.cursor ? decodeCursor(deps.secret, scope, query.cursor) : undefined;
  const rows = await listAuditRows(deps.store.db, {
    taskId: query.task_id,
    actor: query.operator_id,
    after: position ? { at: position.created_at, id: position.id } : undefined,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = rows.length > limit ? page.at(-1) : undefined;
  return { entries: page.map(toAuditEntry), next_cursor: nextCursor(deps.secret, scope, last && { created_at: last.at, id: last.id }) };
}

/** The refusal of an action an operator may not take on a record that is not theirs. */
export function notYours(what: string): AppError {
  return new AppError('forbidden', `Only an admin or the operator themselves may manage ${what}.`);
}

/** The task page's "who did what": the task's latest entries and the names of the operators in them. */
export async function taskAudit(deps: ServiceDeps, taskId: string): Promise<{ entries: AuditEntry[]; names: Map<string, string> }> {
  const [rows, operators] = await Promise.all([listAuditRows(deps.store.db, { taskId, limit: TASK_PAGE_ENTRIES }), listOperatorRows(deps.store.db)]);
  const names = new Map(operators.map((operator) => [operator.id, operator.name]));
  names.set('owner', 'Owner (ADMIN_KEY)');
  return { entries: rows.map(toAuditEntry), names };
}
