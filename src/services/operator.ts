import { dailyCapUsage } from '../abuse/quotas.js';
import {
  ADMIN_PAGE_DEFAULT,
  ADMIN_PAGE_MAX,
  QUEUE_FILTERS,
  type AdminMessage,
  type AdminStats,
  type AdminTask,
  type AdminTaskDetail,
  type MessageList,
  type Queue,
  type QueueFilter,
} from '../domain/admin-schemas.js';
import { AppError } from '../domain/errors.js';
import { TASK_ID_PATTERN } from '../domain/ids.js';
import type { Delivery } from '../domain/task.js';
import { iso } from '../domain/time.js';
import type { MessageRow } from '../store/messages-repo.js';
import { findTask, toPublicTask, type TaskRow } from '../store/tasks-repo.js';
import type { ServiceDeps } from './deps.js';
import { repliesByMessage } from './message-replies.js';
import { decodeCursor, encodeCursor, type Position } from './operator-cursor.js';
import { taskStats } from './stats.js';

/** The operator's reads: the queue, one task (stamping the first view), messages, stats. */

export function toAdminTask(row: TaskRow): AdminTask {
  return {
    ...toPublicTask(row),
    contact_email: row.contact_email,
    delivery: row.delivery as Delivery,
    email_unverified: row.email_unverified === 1,
    accepted_at: row.accepted_at,
    delivered_at: row.delivered_at,
    rejected_at: row.rejected_at,
    request_sha256: row.request_sha256,
  };
}

export function toAdminMessage(row: MessageRow): AdminMessage {
  return {
    message_id: row.id,
    created_at: row.created_at,
    from: row.sender,
    subject: row.subject,
    message: row.message,
    reply_to: row.reply_to,
    email_unverified: row.email_unverified === 1,
    task_ids: JSON.parse(row.task_ids) as string[],
  };
}

export interface ListOptions {
  limit?: number | string | undefined;
  cursor?: string | undefined;
}

export interface QueueOptions extends ListOptions {
  status?: string | undefined;
  /** `newest` first (the API's default) or `oldest` first (the console's: the longest wait on top). */
  order?: string | undefined;
}

function malformed(detail: string): AppError {
  return new AppError('malformed_request', 'The request has malformed parameters; see details.', { details: [detail] });
}

/** The console passes raw query text, the REST route passes coerced numbers: both go through here. */
function pageSize(limit: ListOptions['limit']): number {
  if (limit === undefined || limit === '') return ADMIN_PAGE_DEFAULT;
  const n = typeof limit === 'number' ? limit : /^\d+$/.test(limit) ? Number(limit) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > ADMIN_PAGE_MAX) throw malformed(`limit must be an integer from 1 to ${ADMIN_PAGE_MAX}`);
  return n;
}

function queueFilter(status: string | undefined): QueueFilter | undefined {
  if (status === undefined || status === '') return undefined;
  if (!(QUEUE_FILTERS as readonly string[]).includes(status)) throw malformed(`status must be one of: ${QUEUE_FILTERS.join(', ')}`);
  return status as QueueFilter;
}

/** The queue, newest (or oldest) first, optionally filtered by status (or `open`). */
export async function listQueue(deps: ServiceDeps, options: QueueOptions = {}): Promise<Queue> {
  const limit = pageSize(options.limit);
  const filter = queueFilter(options.status);
  const order = options.order === undefined || options.order === '' ? 'newest' : options.order;
  if (order !== 'newest' && order !== 'oldest') throw malformed('order must be one of: newest, oldest');
  // A cursor is bound to its order too: carried to the other order it would skip tasks.
  const scope = order === 'newest' ? `tasks:${filter ?? 'all'}` : `tasks:${filter ?? 'all'}:oldest`;
  const after = options.cursor ? decodeCursor(deps.secret, scope, options.cursor) : undefined;
  const [past, direction] = order === 'newest' ? (['<', 'desc'] as const) : (['>', 'asc'] as const);

  let query = deps.store.db.selectFrom('tasks').selectAll();
  if (filter === 'open') query = query.where('status', 'in', ['submitted', 'accepted']);
  else if (filter) query = query.where('status', '=', filter);
  if (after) query = query.where((eb) => eb.or([eb('created_at', past, after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', past, after.id)])]));
  const rows = await query.orderBy('created_at', direction).orderBy('id', direction).limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  return { tasks: page.map(toAdminTask), next_cursor: nextCursor(deps, scope, rows.length > limit ? page.at(-1) : undefined) };
}

function nextCursor(deps: ServiceDeps, scope: string, last: Position | undefined): string | null {
  return last ? encodeCursor(deps.secret, scope, { created_at: last.created_at, id: last.id }) : null;
}

function notFound(taskId: string): AppError {
  return new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
}

/**
 * One task in full, with the messages that name it. The first view stamps `seen_by_operator_at`;
 * the conditional update makes that happen once even when two operators open it together.
 */
export async function viewTask(deps: ServiceDeps, taskId: string): Promise<AdminTaskDetail> {
  const db = deps.store.db;
  let row = await findTask(db, taskId);
  if (!row) throw notFound(taskId);
  if (row.seen_by_operator_at === null) {
    const at = iso(deps.clock.now());
    const result = await db.updateTable('tasks').set({ seen_by_operator_at: at }).where('id', '=', taskId).where('seen_by_operator_at', 'is', null).executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) {
      row = { ...row, seen_by_operator_at: at };
      await deps.changes.publish({ kind: 'task', taskId });
      deps.log.info({ task_id: taskId }, 'task first seen by the operator');
    } else {
      row = (await findTask(db, taskId)) ?? row;
    }
  }
  const messages = await messagesNaming(deps, taskId);
  // Each message with the operator's replies, so the task page and the API show the conversation.
  const replies = await repliesByMessage(deps, messages.map((m) => m.message_id));
  return { ...toAdminTask(row), messages: messages.map((m) => ({ ...m, replies: replies.get(m.message_id) ?? [] })) };
}

/** Messages that name a task id (withdrawals, questions), newest first. */
export async function messagesNaming(deps: ServiceDeps, taskId: string): Promise<AdminMessage[]> {
  // Task ids are [a-z0-9-] only, so the id can sit in a LIKE pattern without escaping.
  if (!TASK_ID_PATTERN.test(taskId)) return [];
  const rows = await deps.store.db
    .selectFrom('messages')
    .selectAll()
    .where('task_ids', 'like', `%"${taskId}"%`)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(100)
    .execute();
  return rows.map(toAdminMessage);
}

export async function listMessages(deps: ServiceDeps, options: ListOptions = {}): Promise<MessageList> {
  const limit = pageSize(options.limit);
  const scope = 'messages';
  const after = options.cursor ? decodeCursor(deps.secret, scope, options.cursor) : undefined;
  let query = deps.store.db.selectFrom('messages').selectAll();
  if (after) query = query.where((eb) => eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]));
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  return { messages: page.map(toAdminMessage), next_cursor: nextCursor(deps, scope, rows.length > limit ? page.at(-1) : undefined) };
}

/** Task figures over the window plus today's use of the global daily caps. */
export async function adminStats(deps: ServiceDeps, options: { days?: number | string | undefined } = {}): Promise<AdminStats> {
  const raw = options.days;
  const days = raw === undefined || raw === '' ? 30 : typeof raw === 'number' ? raw : /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw malformed('days must be an integer from 1 to 3650');
  const [stats, caps] = await Promise.all([taskStats(deps, { days }), dailyCapUsage(deps)]);
  return { window_days: days, ...stats, daily_caps: caps };
}

/** How many tasks are in each status, over all time (the console's filter tabs). */
export async function countByStatus(deps: ServiceDeps): Promise<Record<string, number>> {
  const db = deps.store.db;
  const rows = await db.selectFrom('tasks').select(['status', db.fn.countAll<number>().as('n')]).groupBy('status').execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/**
 * Messages naming any of `taskIds`, sent since the oldest of them was created (the queue flags
 * tasks that have mail, withdrawals first). Bounded to the most recent 500 messages.
 */
export async function messagesNamingAny(deps: ServiceDeps, tasks: Pick<AdminTask, 'task_id' | 'created_at'>[]): Promise<Map<string, AdminMessage[]>> {
  const byTask = new Map<string, AdminMessage[]>();
  if (tasks.length === 0) return byTask;
  const since = tasks.reduce((min, t) => (t.created_at < min ? t.created_at : min), tasks[0]?.created_at ?? '');
  const wanted = new Set(tasks.map((t) => t.task_id));
  const rows = await deps.store.db
    .selectFrom('messages')
    .selectAll()
    .where('created_at', '>=', since)
    .where('task_ids', '!=', '[]')
    .orderBy('created_at', 'desc')
    .limit(500)
    .execute();
  for (const message of rows.map(toAdminMessage)) {
    for (const id of message.task_ids) {
      if (wanted.has(id)) byTask.set(id, [...(byTask.get(id) ?? []), message]);
    }
  }
  return byTask;
}
