import { dailyCapUsage } from '../../abuse/quotas.js';
import { AppError } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN } from '../../domain/ids.js';
import {
  ADMIN_PAGE_DEFAULT,
  type AdminMessage,
  type AdminStats,
  type AdminTask,
  type AdminTaskDetail,
  type MessageList,
  type PageQuery,
  PageQuerySchema,
  type Queue,
  type QueueQuery,
  QueueQuerySchema,
  type StatsQuery,
  StatsQuerySchema,
} from '../../domain/tasks/admin-schemas.js';
import { type Delivery, OPEN_STATUSES } from '../../domain/tasks/task.js';
import { iso } from '../../domain/time.js';
import { listMessageRows, type MessageRow, messagesNamingTask, messagesNamingTasks } from '../../store/messages/messages-repo.js';
import { countTasksByStatus, findTask, listTasks, markSeen, type TaskRow, taskSummaries, toPublicTask } from '../../store/tasks/tasks-repo.js';
import { assigneeOf, assigneesOf } from '../../store/team/assignments-repo.js';
import type { ServiceDeps } from '../context.js';
import { repliesByMessage } from '../messages/replies.js';
import { lastRetentionRun } from '../runtime/retention.js';
import { queryChecker } from '../tasks/validation.js';
import { approvalView } from './approval-rounds.js';
import { decodeCursor, nextCursor } from './cursor.js';
import { taskStats } from './stats.js';

/** The operator's reads: the queue, one task (stamping the first view), messages, stats. */

export function toAdminTask(row: TaskRow, assignee: string | null): AdminTask {
  return {
    assignee,
    ...toPublicTask(row),
    contact_email: row.contact_email,
    delivery: row.delivery as Delivery,
    email_unverified: row.email_unverified === 1,
    accepted_at: row.accepted_at,
    delivered_at: row.delivered_at,
    rejected_at: row.rejected_at,
    is_test: row.is_test === 1,
    request_sha256: row.request_sha256,
    agent: row.agent_key_id ? { key_id: row.agent_key_id, directory: row.agent_directory ?? '' } : null,
    ...approvalView(row),
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
  test?: string | undefined;
  /** `newest` first (the API's default), `oldest` first, or `due` first (the console's: the earlier of deadline and response target). */
  order?: string | undefined;
  /** An operator_id, or `none` for the unassigned tasks. */
  assignee?: string | undefined;
  /** Leaves out the tasks snoozed past now (the console's default inbox, docs/inbox.md). */
  hideSnoozed?: boolean;
}

// The REST routes pass coerced numbers, the console raw query text: both go through these.
const checkQueueQuery = queryChecker<QueueQuery>(QueueQuerySchema);
// hideSnoozed is the console's, not a query parameter of the contract.
const checkMessageQuery = queryChecker<PageQuery>(PageQuerySchema);
const checkStatsQuery = queryChecker<StatsQuery>(StatsQuerySchema);

/** Drops parameters given as empty text (an empty form field means "not given"). */
function given<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;
}

/** The queue, newest (or oldest) first, optionally filtered by status (or `open`). */
export async function listQueue(deps: ServiceDeps, options: QueueOptions = {}): Promise<Queue> {
  const { hideSnoozed: _console, ...queryOptions } = options;
  const query = checkQueueQuery(given(queryOptions));
  const limit = query.limit ?? ADMIN_PAGE_DEFAULT;
  const filter = query.status;
  const order = query.order ?? 'newest';
  // A cursor is bound to its order and test filter too: carried to another it would skip tasks.
  const scope = `${order === 'newest' ? `tasks:${filter ?? 'all'}` : `tasks:${filter ?? 'all'}:${order}`}${query.test ? `:test-${query.test}` : ''}${query.assignee ? `:assignee-${query.assignee}` : ''}`;
  const after = query.cursor ? decodeCursor(deps.secret, scope, query.cursor) : undefined;

  const statuses = filter === 'open' ? [...OPEN_STATUSES] : filter ? [filter] : undefined;
  const isTest = query.test === 'only' ? true : query.test === 'exclude' ? false : undefined;
  const assignee = query.assignee === 'none' ? null : query.assignee;
  const awakeAt = options.hideSnoozed ? iso(deps.clock.now()) : undefined;
  const rows = await listTasks(deps.store.db, { statuses, isTest, after, limit: limit + 1, order, awakeAt, ...(assignee !== undefined ? { assignee } : {}) });
  const page = rows.slice(0, limit);
  const last = rows.length > limit ? page.at(-1) : undefined;
  // Keyset position: (due_at, id) in the due order, (created_at, id) otherwise.
  const position = last && order === 'due' ? { created_at: last.due_at ?? '', id: last.id } : last;
  const assignees = await assigneesOf(
    deps.store.db,
    page.map((row) => row.id),
  );
  return { tasks: page.map((row) => toAdminTask(row, assignees.get(row.id) ?? null)), next_cursor: nextCursor(deps.secret, scope, position) };
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
    if (await markSeen(db, taskId, at)) {
      row = { ...row, seen_by_operator_at: at };
      await deps.changes.publish({ kind: 'task', taskId });
      deps.log.info({ task_id: taskId }, 'task first seen by the operator');
    } else {
      row = (await findTask(db, taskId)) ?? row;
    }
  }
  const messages = await messagesNaming(deps, taskId);
  // Each message with the operator's replies, so the task page and the API show the conversation.
  const replies = await repliesByMessage(
    deps,
    messages.map((m) => m.message_id),
  );
  return { ...toAdminTask(row, await assigneeOf(deps.store.db, row.id)), messages: messages.map((m) => ({ ...m, replies: replies.get(m.message_id) ?? [] })) };
}

/** Messages that name a task id (withdrawals, questions), newest first. */
export async function messagesNaming(deps: ServiceDeps, taskId: string): Promise<AdminMessage[]> {
  // Task ids are [A-Za-z0-9-] only, so the id can sit in a LIKE pattern without escaping.
  if (!ANY_TASK_ID_PATTERN.test(taskId)) return [];
  const rows = await messagesNamingTask(deps.store.db, taskId);
  return rows.map(toAdminMessage);
}

export async function listMessages(deps: ServiceDeps, options: ListOptions = {}): Promise<MessageList> {
  const query = checkMessageQuery(given(options));
  const limit = query.limit ?? ADMIN_PAGE_DEFAULT;
  const scope = 'messages';
  const after = query.cursor ? decodeCursor(deps.secret, scope, query.cursor) : undefined;
  const rows = await listMessageRows(deps.store.db, { after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return { messages: page.map(toAdminMessage), next_cursor: nextCursor(deps.secret, scope, rows.length > limit ? page.at(-1) : undefined) };
}

/** Task figures over the window plus today's use of the global daily caps. */
export async function adminStats(deps: ServiceDeps, options: { days?: number | string | undefined } = {}): Promise<AdminStats> {
  const days = checkStatsQuery(given(options)).days ?? 30;
  const [stats, caps, retention] = await Promise.all([taskStats(deps, { days }), dailyCapUsage(deps), lastRetentionRun(deps)]);
  return { window_days: days, ...stats, daily_caps: caps, retention };
}

/** How many tasks are in each status, over all time (the console's filter tabs). */
export async function countByStatus(deps: ServiceDeps): Promise<Record<string, number>> {
  return countTasksByStatus(deps.store.db);
}

/**
 * Messages naming any of `tasks` (the queue flags tasks that have mail, withdrawals first): found
 * through the message-to-task links, at most the 500 most recent.
 */
export async function messagesNamingAny(deps: ServiceDeps, tasks: Pick<AdminTask, 'task_id' | 'created_at'>[]): Promise<Map<string, AdminMessage[]>> {
  const byTask = new Map<string, AdminMessage[]>();
  if (tasks.length === 0) return byTask;
  const wanted = new Set(tasks.map((t) => t.task_id));
  const rows = await messagesNamingTasks(
    deps.store.db,
    tasks.map((t) => t.task_id),
    500,
  );
  for (const message of rows.map(toAdminMessage)) {
    for (const id of message.task_ids) {
      if (wanted.has(id)) byTask.set(id, [...(byTask.get(id) ?? []), message]);
    }
  }
  return byTask;
}

/** The current status of each existing task among `taskIds` (the console's message list). */
export async function statusesOf(deps: ServiceDeps, taskIds: string[]): Promise<Map<string, string>> {
  const rows = await taskSummaries(deps.store.db, taskIds);
  return new Map(rows.map((r) => [r.id, r.status]));
}
