import { type CompiledQuery, type ExpressionBuilder, type Insertable, type Selectable, sql } from 'kysely';
import { isAwaitingAnswer, parseQuestions } from '../../domain/questions/questions.js';
import { type CoverageKey, coverageChange, coverTask } from '../../domain/tasks/coverage.js';
import type { PublicAttachment, PublicTask } from '../../domain/tasks/schemas.js';
import { ALL_STATUSES, type Source, type StatusEntry, type TaskStatus, type TaskType } from '../../domain/tasks/task.js';
import { type Db, type Store, withTransaction } from '../db.js';
import type { Database, TasksTable } from '../schema.js';
import { isSqlite, padded, writeChunks } from '../sqlite/batches.js';
import { reusableList, reusableRows } from '../sqlite/prepared.js';
import { countStatusChange } from '../team/assignments-repo.js';
import { addCoverage } from './coverage-repo.js';
import type { PublicTaskCache } from './task-cache.js';
import { addTaskCounts, type CountKey, countChange, countTask, dayCounts, dayOf, statusCounts, unseenCount } from './task-counts-repo.js';

export type TaskRow = Selectable<TasksTable>;

/** The columns the public task is made of: never contact_email, callback_url, client_hash or request_json. */
const PUBLIC_COLUMNS = [
  'id',
  'status',
  'task_type',
  'description',
  'location_required',
  'location_detail',
  'deadline',
  'output_format',
  'budget_usd',
  'requester',
  'source',
  'created_at',
  'updated_at',
  'status_history',
  'operator_notes',
  'seen_by_operator_at',
  'eta',
  'receipt',
  'deliverable_sha256',
  'receipt_issued_at',
  'attachments',
  'response_schema',
  'questions',
  'receipt_log_index',
  'approvals_required',
  'approvals_given',
] as const satisfies readonly (keyof TaskRow)[];
export type PublicTaskRow = Pick<TaskRow, (typeof PUBLIC_COLUMNS)[number]>;

/** Every column of the tasks table; the check below fails to compile when one is missing. */
const TASK_COLUMNS = [
  'id',
  'status',
  'task_type',
  'description',
  'dedupe_key',
  'location_required',
  'location_detail',
  'deadline',
  'output_format',
  'budget_usd',
  'requester',
  'source',
  'delivery',
  'contact_email',
  'email_unverified',
  'client_hash',
  'created_at',
  'updated_at',
  'status_history',
  'operator_notes',
  'seen_by_operator_at',
  'eta',
  'accepted_at',
  'delivered_at',
  'rejected_at',
  'receipt',
  'deliverable_sha256',
  'receipt_issued_at',
  'request_sha256',
  'request_json',
  'callback_url',
  'attachments',
  'erased_at',
  'is_test',
  'response_schema',
  'questions',
  'deadline_at',
  'deadline_passed_at',
  'due_at',
  'agent_key_id',
  'agent_directory',
  'receipt_log_index',
  'context_id',
  'approvals_required',
  'approvals_given',
  'approval_round',
  'proposal',
  'approval_returned',
] as const satisfies readonly (keyof TasksTable)[];
const allColumnsListed: Exclude<keyof TasksTable, (typeof TASK_COLUMNS)[number]> extends never ? true : never = true;
void allColumnsListed;

/** What the kept counts and coverage are made of (task-counts-repo.ts, coverage-repo.ts). */
const TIMELINE_COLUMNS = [
  'status',
  'task_type',
  'is_test',
  'created_at',
  'seen_by_operator_at',
  'accepted_at',
  'delivered_at',
  'rejected_at',
] as const satisfies readonly (keyof TaskRow)[];

/** The insert of tasks, every column given, compiled once per row count (prepared.ts). */
const insertTasksQuery = reusableRows(TASK_COLUMNS, (db, rows) => db.insertInto('tasks').values(rows as Insertable<TasksTable>[]));

/** Inserts one task (an import) and counts it, in one transaction. */
export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await withTransaction(db, async (trx) => {
    await insertTasksQuery(trx, [row]);
    await addTaskCounts(trx, countTask(new Map(), row, 1));
    await addCoverage(trx, coverTask(new Map(), row, 1));
  });
}

/**
 * Inserts the tasks of a batch of submissions: on PostgreSQL in one statement, on SQLite in one
 * per chunk (batches.ts), each through its compiled insert.
 */
export async function insertTasks(db: Db, rows: TaskRow[]): Promise<void> {
  await withTransaction(db, async (trx) => {
    for (const chunk of writeChunks(trx, rows, TASK_COLUMNS.length)) await insertTasksQuery(trx, chunk);
    // The batch's counts in one statement (a few rows: the day and the statuses it touches).
    const counts = new Map<CountKey, number>();
    const coverage = new Map<CoverageKey, number>();
    for (const row of rows) {
      countTask(counts, row, 1);
      coverTask(coverage, row, 1);
    }
    await addTaskCounts(trx, counts);
    // Nothing for a new submission (no event yet): no statement.
    await addCoverage(trx, coverage);
  });
}

// The status read is the hottest query: compile it once per store and only swap the parameter.
const compiledFindTask = new WeakMap<Db, CompiledQuery<TaskRow>>();

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  let compiled = compiledFindTask.get(db);
  if (!compiled) {
    compiled = db.selectFrom('tasks').selectAll().where('id', '=', '').compile();
    compiledFindTask.set(db, compiled);
  }
  const result = await db.executeQuery<TaskRow>({ ...compiled, parameters: [id] });
  return result.rows[0];
}

/** The status read's prepared statement per SQLite handle (raw mode: an array per row). */
const readStatements = new WeakMap<object, { get(id: string): unknown }>();

/**
 * The public status read: the hottest path of the service, and polled again and again for the
 * same task. Served from the cache (store/tasks/task-cache.ts) while it holds the task; otherwise, on
 * SQLite, one prepared statement run directly in raw mode (building an object per row in the
 * driver costs more than the lookup), on PostgreSQL the precompiled query above.
 */
export async function findPublicTask(store: Store, cache: PublicTaskCache, id: string): Promise<Readonly<PublicTask> | undefined> {
  const { sqlite } = store;
  // While a transaction is open on SQLite's one connection, a direct read would see its
  // uncommitted writes: wait for it through Kysely instead, and keep nothing.
  if (sqlite?.inTransaction) {
    const row = await findTask(store.db, id);
    return row ? toPublicTask(row) : undefined;
  }
  const cached = cache.get(id);
  if (cached) return cached;
  if (!sqlite) {
    return cache.load(id, async () => {
      const row = await findTask(store.db, id);
      return row ? toPublicTask(row) : undefined;
    });
  }
  return cache.load(id, () => {
    let statement = readStatements.get(sqlite);
    if (!statement) {
      statement = sqlite.prepare(`SELECT ${PUBLIC_COLUMNS.join(', ')} FROM tasks WHERE id = ?`).raw(true);
      readStatements.set(sqlite, statement);
    }
    const values = statement.get(id) as unknown[] | undefined;
    if (!values) return undefined;
    const row: Record<string, unknown> = {};
    for (let i = 0; i < PUBLIC_COLUMNS.length; i++) row[PUBLIC_COLUMNS[i] as string] = values[i];
    return toPublicTask(row as PublicTaskRow);
  });
}

/**
 * The public task if the read cache holds a current copy, without waiting or querying: for the
 * status read's fast lane (http/lanes/fast-reads.ts). Nothing while SQLite's one connection is inside
 * a transaction, as findPublicTask.
 */
export function cachedPublicTask(store: Store, cache: PublicTaskCache, id: string): Readonly<PublicTask> | undefined {
  return store.sqlite?.inTransaction ? undefined : cache.get(id);
}

/**
 * Takes the task's row lock for the rest of the transaction (PostgreSQL), so an upload and a
 * delivery of the same task run one after the other. SQLite transactions are serialized already.
 */
export async function lockTask(db: Db, dialect: 'sqlite' | 'postgres', id: string): Promise<void> {
  if (dialect === 'postgres') await db.selectFrom('tasks').select('id').where('id', '=', id).forUpdate().execute();
}

/** Any change to a task (tests, tools); its counts follow, in the same transaction. */
export async function updateTask(db: Db, id: string, changes: Partial<TasksTable>): Promise<void> {
  await withTransaction(db, async (trx) => {
    let query = trx.selectFrom('tasks').select(TIMELINE_COLUMNS).where('id', '=', id);
    if (!isSqlite(trx)) query = query.forUpdate();
    const before = await query.executeTakeFirst();
    await trx.updateTable('tasks').set(changes).where('id', '=', id).execute();
    if (!before) return;
    // The assignee's count first, then the task counts: every transaction takes them in this order.
    if (changes.status !== undefined) await countStatusChange(trx, id, before.status, changes.status);
    await addTaskCounts(trx, countChange(before, { ...before, ...changes }));
    await addCoverage(trx, coverageChange(before, { ...before, ...changes }));
  });
}

export function statusHistory(row: Pick<TaskRow, 'status_history'>): StatusEntry[] {
  return JSON.parse(row.status_history) as StatusEntry[];
}

/** The task as the public status endpoint returns it: never the contact e-mail or the client. */
export function toPublicTask(row: PublicTaskRow): PublicTask {
  const questions = parseQuestions(row.questions);
  const task: PublicTask = {
    task_id: row.id,
    status: row.status as TaskStatus,
    task_type: row.task_type as TaskType,
    description: row.description,
    location_required: row.location_required === 1,
    location_detail: row.location_detail,
    deadline: row.deadline,
    output_format: row.output_format,
    budget_usd: row.budget_usd,
    requester: row.requester,
    source: row.source as Source,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status_history: statusHistory(row),
    operator_notes: row.operator_notes,
    seen_by_operator_at: row.seen_by_operator_at,
    eta: row.eta,
    response_schema: row.response_schema === null ? null : (JSON.parse(row.response_schema) as Record<string, unknown>),
    result: structuredResult(row),
    questions,
    awaiting_answer: isAwaitingAnswer(questions),
  };
  if (row.receipt !== null) {
    task.receipt = row.receipt;
    task.deliverable_sha256 = row.deliverable_sha256 ?? '';
    task.receipt_issued_at = row.receipt_issued_at ?? '';
    task.receipt_log_index = row.receipt_log_index === null ? null : Number(row.receipt_log_index);
  }
  // Only on tasks that asked for more than one approval (contract "Decisions by more than one person").
  if (row.approvals_required > 1) task.approvals = { required: row.approvals_required, given: row.approvals_given };
  // Frozen at delivery, with absolute URLs; absent before (contract "Evidence").
  if (row.attachments !== null) task.attachments = JSON.parse(row.attachments) as PublicAttachment[];
  return task;
}

/**
 * The delivered answer of a task with a response schema: its operator_notes are the canonical JSON
 * of the result (services/console/transitions.ts). Null before delivery, without a schema, and
 * once retention has erased the notes.
 */
function structuredResult(row: Pick<TaskRow, 'status' | 'response_schema' | 'operator_notes'>): Record<string, unknown> | null {
  if (row.status !== 'delivered' || row.response_schema === null || row.operator_notes === null) return null;
  try {
    const parsed: unknown = JSON.parse(row.operator_notes);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The tasks with a proposal waiting for approvals, newest change first (a partial index: cost of the page only). */
export async function proposedTasks(db: Db, limit: number): Promise<TaskRow[]> {
  return db.selectFrom('tasks').selectAll().where('proposal', 'is not', null).orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Updates a task only while it still has `fromStatus` (the operator's PATCH): two racing operators
 * cannot both move it. False when the status changed meanwhile. What the change does to the kept
 * counts and coverage is the difference between the row before and after; the first view is
 * stamped once (a stamp on a task already seen keeps the first one).
 */
export async function updateTaskIfStatus(
  db: Db,
  id: string,
  fromStatus: string,
  changes: Partial<TasksTable>,
  approvals?: Pick<TaskRow, 'approval_round' | 'approvals_given'>,
): Promise<boolean> {
  return withTransaction(db, async (trx) => {
    // With `approvals`, only while the proposal round and its count are still those read (docs/approvals.md).
    const before = isSqlite(trx)
      ? await updateAfterRead(trx, id, fromStatus, changes, approvals)
      : await updateReturningBefore(trx, id, fromStatus, changes, approvals);
    if (!before) return false;
    const { seen_by_operator_at: stamp, ...rest } = changes;
    const after = { ...before, ...(before.seen_by_operator_at === null && stamp !== undefined ? changes : rest) };
    await countStatusChange(trx, id, fromStatus, after.status);
    await addTaskCounts(trx, countChange(before, after));
    await addCoverage(trx, coverageChange(before, after));
    return true;
  });
}

type Timeline = Pick<TaskRow, (typeof TIMELINE_COLUMNS)[number]>;
type Approvals = Pick<TaskRow, 'approval_round' | 'approvals_given'>;

/** The task's row while it has `fromStatus` (and, with `approvals`, that proposal round and count). */
function rowIfStill(trx: Db, id: string, fromStatus: string, approvals: Approvals | undefined) {
  const query = trx.selectFrom('tasks').where('id', '=', id).where('status', '=', fromStatus);
  return approvals ? query.where('approval_round', '=', approvals.approval_round).where('approvals_given', '=', approvals.approvals_given) : query;
}

/**
 * PostgreSQL: one statement. The row as it was is read under its lock by the statement's own
 * subquery (FOR UPDATE waits out a concurrent change and re-checks the status) and returned, the
 * new values being the caller's.
 */
async function updateReturningBefore(
  trx: Db,
  id: string,
  fromStatus: string,
  changes: Partial<TasksTable>,
  approvals: Approvals | undefined,
): Promise<Timeline | undefined> {
  const { seen_by_operator_at: stamp, ...rest } = changes;
  const set = stamp === undefined ? rest : { ...rest, seen_by_operator_at: sql<string | null>`coalesce(tasks.seen_by_operator_at, ${stamp})` };
  const locked = rowIfStill(trx, id, fromStatus, approvals)
    .select(['id', ...TIMELINE_COLUMNS])
    .forUpdate()
    .as('before');
  return trx
    .updateTable('tasks')
    .set(set)
    .from(locked)
    .whereRef('tasks.id', '=', 'before.id')
    .returning(TIMELINE_COLUMNS.map((column) => `before.${column}` as const))
    .executeTakeFirst();
}

/** SQLite (one writer at a time, statements in process): the row read, then updated. */
async function updateAfterRead(
  trx: Db,
  id: string,
  fromStatus: string,
  changes: Partial<TasksTable>,
  approvals: Approvals | undefined,
): Promise<Timeline | undefined> {
  const before = await rowIfStill(trx, id, fromStatus, approvals).select(TIMELINE_COLUMNS).executeTakeFirst();
  if (!before) return undefined;
  const { seen_by_operator_at: stamp, ...rest } = changes;
  await trx
    .updateTable('tasks')
    .set(before.seen_by_operator_at === null && stamp !== undefined ? changes : rest)
    .where('id', '=', id)
    .execute();
  return before;
}

/** Stamps the operator's first view unless already stamped; true when this call stamped it. */
export async function markSeen(db: Db, id: string, at: string): Promise<boolean> {
  return withTransaction(db, async (trx) => {
    const row = await trx
      .updateTable('tasks')
      .set({ seen_by_operator_at: at })
      .where('id', '=', id)
      .where('seen_by_operator_at', 'is', null)
      .returning(TIMELINE_COLUMNS)
      .executeTakeFirst();
    if (!row) return false;
    const before = { ...row, seen_by_operator_at: null };
    await addTaskCounts(trx, countChange(before, row));
    await addCoverage(trx, coverageChange(before, row));
    return true;
  });
}

/**
 * Recent tasks with this dedupe key (duplicate detection). Looked up by the dedupe key alone (its
 * index is selective: identical descriptions are rare); the caller matches the client or e-mail.
 * Given an OR, a planner may otherwise pick the client index and scan every task that client sent.
 */
export type DedupeMatch = Pick<TaskRow, 'id' | 'client_hash' | 'contact_email' | 'dedupe_key'>;

/** Recent tasks of a list of dedupe keys, compiled once per list length (prepared.ts). */
const findByDedupeKeysQuery = reusableList(
  (db, keys, since: string) =>
    db
      .selectFrom('tasks')
      .select(['id', 'client_hash', 'contact_email', 'dedupe_key'])
      .where('dedupe_key', 'in', keys as string[])
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc'),
  '\u0000since',
);

/** Tasks created after `since` with any of these dedupe keys, newest first. */
export async function findByDedupeKeys(db: Db, dedupeKeys: string[], since: string): Promise<DedupeMatch[]> {
  if (dedupeKeys.length === 0) return [];
  return (await db.executeQuery(findByDedupeKeysQuery(db, padded([...new Set(dedupeKeys)]), since))).rows;
}

/** Type and status of each existing task among `ids` (a message's linked tasks, the console's message list). */
export async function taskSummaries(db: Db, ids: string[]): Promise<Pick<TaskRow, 'id' | 'task_type' | 'status' | 'description'>[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('tasks').select(['id', 'task_type', 'status', 'description']).where('id', 'in', ids).execute();
}

/**
 * How many tasks are in each status, over all time or over tasks created since `since`: from the
 * kept counts (task-counts-repo.ts), whole days from one row per day and status, and the window's
 * first, partial day counted from the creation index (one day of tasks at most).
 */
export async function countTasksByStatus(db: Db, since?: string): Promise<Record<string, number>> {
  if (since === undefined) return statusCounts(db);
  const firstDay = dayOf(since);
  const nextDay = new Date(Date.parse(`${firstDay}T00:00:00.000Z`) + 86_400_000).toISOString();
  const partial = await db
    .selectFrom('tasks')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .where('created_at', '>=', since)
    .where('created_at', '<', nextDay)
    .groupBy('status')
    .execute();
  const counts = await dayCounts(db, dayOf(nextDay), '9999-12-31');
  for (const row of partial) counts[row.status] = (counts[row.status] ?? 0) + Number(row.n);
  return counts;
}

/**
 * The response-time figures' sample (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): the most recent tasks created since `since`, at
 * most `limit` of them, newest first, so the figures cost the same at any size of history. Test
 * tasks are dropped here, after the limit, so the read is one bounded walk of the creation index.
 */
export const RECENT_SAMPLE = 1000;

export async function taskTimings(
  db: Db,
  since: string,
  limit = RECENT_SAMPLE,
): Promise<Pick<TaskRow, 'created_at' | 'seen_by_operator_at' | 'accepted_at'>[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['created_at', 'seen_by_operator_at', 'accepted_at', 'is_test'])
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  // Test tasks (docs/import.md) say nothing about how fast a human answers real work.
  return rows.filter((r) => r.is_test === 0 && (r.seen_by_operator_at !== null || r.accepted_at !== null));
}

/** A keyset position in a newest-first list. */
export interface PagePosition {
  created_at: string;
  id: string;
}

/**
 * Tasks newest first (or oldest, or due first), optionally of some statuses, strictly after
 * `after`; at most `limit` rows. Each status (and test filter) is one walk down an index ending in
 * (created_at, id) or (due_at, id) that stops after `limit` rows (tasks_queue_idx,
 * tasks_test_queue_idx, tasks_created_idx, tasks_status_due_idx, tasks_test_due_idx); several are
 * merged here, so a page never sorts every matching task.
 */
export async function listTasks(
  db: Db,
  options: {
    statuses?: string[] | undefined;
    isTest?: boolean | undefined;
    after?: PagePosition | undefined;
    limit: number;
    order?: 'newest' | 'oldest' | 'due';
    /** An operator_id: their tasks; null: the unassigned ones (task_assignments, migration 140). */
    assignee?: string | null;
    /** Leaves out tasks snoozed past this instant (the console's default inbox; migration 210). */
    awakeAt?: string | undefined;
  },
): Promise<TaskRow[]> {
  const { after, isTest, limit, assignee, awakeAt } = options;
  const assigned = (eb: ExpressionBuilder<Database, 'tasks'>) =>
    eb.selectFrom('task_assignments').select('task_id').whereRef('task_assignments.task_id', '=', 'tasks.id');
  // Newest first by default; oldest first by creation; due first by due_at (docs/questions.md: the
  // position's created_at slot then carries due_at). Every order walks an index per status.
  const due = options.order === 'due';
  const column = due ? 'due_at' : 'created_at';
  const [past, direction] = options.order === 'oldest' || due ? (['>', 'asc'] as const) : (['<', 'desc'] as const);
  // Due first has no index over every status (tasks_status_due_idx leads with the status).
  const statuses: (string | undefined)[] = options.statuses ?? (isTest === undefined && !due ? [undefined] : [...ALL_STATUSES]);
  const parts = await Promise.all(
    statuses.map((status) => {
      let query = db.selectFrom('tasks').selectAll();
      if (isTest !== undefined) query = query.where('is_test', '=', isTest ? 1 : 0);
      if (status !== undefined) query = query.where('status', '=', status);
      if (assignee === null) query = query.where((eb) => eb.not(eb.exists(assigned(eb))));
      else if (assignee !== undefined) query = query.where((eb) => eb.exists(assigned(eb).where('task_assignments.operator_id', '=', assignee)));
      if (after) query = query.where((eb) => eb(eb.refTuple(column, 'id'), past, eb.tuple(after.created_at, after.id)));
      if (awakeAt !== undefined) query = query.where((eb) => eb.not(eb.exists(snoozedPast(eb, awakeAt))));
      return query.orderBy(column, direction).orderBy('id', direction).limit(limit).execute();
    }),
  );
  if (parts.length === 1) return parts[0] ?? [];
  const sign = direction === 'asc' ? 1 : -1;
  const key = (row: TaskRow) => `${(due ? row.due_at : row.created_at) ?? ''}\u0000${row.id}`;
  return parts
    .flat()
    .sort((a, b) => (key(a) < key(b) ? -sign : key(a) > key(b) ? sign : 0))
    .slice(0, limit);
}

/**
 * When each of the most recent tasks created since `since` was created and first seen (the
 * response-target figure): at most `limit`, newest first, as taskTimings.
 */
export async function firstViewTimes(db: Db, since: string, limit = RECENT_SAMPLE): Promise<Pick<TaskRow, 'created_at' | 'seen_by_operator_at'>[]> {
  return db
    .selectFrom('tasks')
    .select(['created_at', 'seen_by_operator_at'])
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Submitted tasks the operator has not opened yet (the console's title count), from the kept counts. */
export async function countUnseen(db: Db): Promise<number> {
  return unseenCount(db);
}

/** Whether a task with this id is stored (the import skips those). */
export async function taskExists(db: Db, id: string): Promise<boolean> {
  const row = await db.selectFrom('tasks').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/**
 * Creation time of the oldest task still waiting on the operator (the metrics' queue age), or
 * null: the first entry of each open status in tasks_queue_idx.
 */
export async function oldestOpenTaskCreatedAt(db: Db, openStatuses: readonly string[]): Promise<string | null> {
  const firsts = await Promise.all(
    openStatuses.map((status) => db.selectFrom('tasks').select('created_at').where('status', '=', status).orderBy('created_at').limit(1).executeTakeFirst()),
  );
  const oldest = firsts.map((row) => row?.created_at).filter((at): at is string => at !== undefined);
  return oldest.length === 0 ? null : oldest.reduce((min, at) => (at < min ? at : min));
}

/**
 * When a final task became final, null while it is open: the expression of the partial index
 * tasks_erase_due_idx (migration 150), written exactly as there, since a planner uses an
 * expression index only for the same expression.
 */
const FINAL_SINCE = sql<string>`case when status in ('delivered', 'rejected') then coalesce(delivered_at, rejected_at, updated_at) end`;

/**
 * Ids of up to `limit` tasks in a final status since before `before` (delivered_at or rejected_at)
 * whose private fields retention has not erased yet, longest final first: one walk of
 * tasks_erase_due_idx, which holds only tasks not yet erased, so a batch costs the same however
 * many tasks are stored. The final statuses are those of FINAL_SINCE (domain FINAL_STATUSES).
 */
export async function finalTasksToErase(db: Db, before: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('erased_at', 'is', null)
    .where(FINAL_SINCE, '<', before)
    .orderBy(FINAL_SINCE)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Erases what retention removes from a final task: the contact e-mail and the callback URL. What the receipt binds stays: request_json and its hash (they exclude the
 * contact e-mail), the deliverable hash, the timeline, the receipt itself.
 */
export async function eraseTaskPrivateFields(db: Db, ids: string[], at: string): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('tasks')
    .set({ contact_email: null, callback_url: null, erased_at: at })
    .where('id', 'in', ids)
    .where('erased_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Open tasks whose deadline instant is at or before `now` and not handled yet (the deadline sweep,
 * docs/questions.md), earliest deadline first; `statuses` is submitted and accepted, or accepted alone when
 * automatic rejection is off. Served by the partial index of migration 130, which holds only such rows.
 */
export async function tasksPastDeadline(db: Db, now: string, statuses: readonly string[], limit: number): Promise<TaskRow[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('deadline_at', 'is not', null)
    .where('deadline_passed_at', 'is', null)
    .where('status', 'in', [...statuses])
    .where('deadline_at', '<=', now)
    .orderBy('deadline_at')
    .limit(limit)
    .execute();
}

/** Marks an accepted task's passed deadline as announced; true only for the call that marked it (once per task). */
export async function markDeadlinePassed(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ deadline_passed_at: at })
    .where('id', '=', id)
    .where('status', '=', 'accepted')
    .where('deadline_passed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A snooze of the outer task that lasts past `at` (task_snoozes, migration 210: its primary key). */
function snoozedPast(eb: ExpressionBuilder<Database, 'tasks'>, at: string) {
  return eb.selectFrom('task_snoozes').select('task_snoozes.task_id').whereRef('task_snoozes.task_id', '=', 'tasks.id').where('task_snoozes.until', '>', at);
}

/** The tasks among `ids` (search hits by id), in no particular order. */
export async function findTasks(db: Db, ids: string[]): Promise<TaskRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
}

/**
 * The console queue's filters and sorts (docs/inbox.md), for one status: a walk down one index of
 * migration 210 (or 130's tasks_status_due_idx) that stops after `limit` rows.
 * - `by: 'created'`: type, requester (contact e-mail) and on-site filters, newest or oldest first
 *   (tasks_type_queue_idx, tasks_contact_queue_idx, tasks_onsite_queue_idx).
 * - `by: 'deadline'`: tasks with a deadline, soonest first, optionally before a date (tasks_deadline_queue_idx).
 * - `by: 'eta'`: tasks with an ETA, soonest first, optionally passed (tasks_eta_queue_idx).
 * - `by: 'due'`: tasks whose due instant is before a date, soonest first (tasks_status_due_idx).
 * One filter column drives each walk; the caller narrows further among the rows it returns.
 */
export async function filteredTasks(
  db: Db,
  options: {
    status: string;
    by: 'created' | 'deadline' | 'eta' | 'due';
    direction?: 'asc' | 'desc';
    taskType?: string | undefined;
    contactEmail?: string | undefined;
    onSite?: boolean | undefined;
    before?: string | undefined;
    limit: number;
  },
): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll().where('status', '=', options.status);
  if (options.by === 'created') {
    if (options.taskType !== undefined) query = query.where('task_type', '=', options.taskType);
    else if (options.contactEmail !== undefined) query = query.where('contact_email', '=', options.contactEmail);
    else if (options.onSite !== undefined) query = query.where('location_required', '=', options.onSite ? 1 : 0);
    const direction = options.direction ?? 'desc';
    return query.orderBy('created_at', direction).orderBy('id', direction).limit(options.limit).execute();
  }
  const column = options.by === 'deadline' ? 'deadline_at' : options.by === 'eta' ? 'eta' : 'due_at';
  query = options.before !== undefined ? query.where(column, '<', options.before) : query.where(column, 'is not', null);
  return query.orderBy(column, 'asc').orderBy('id', 'asc').limit(options.limit).execute();
}

/** A page of tasks down one of the listing indexes: newest update first, after the position `after`. */
interface TaskPage {
  after?: { updated_at: string; id: string } | undefined;
  status?: string | undefined;
  limit: number;
}

/**
 * One page of a verified agent's tasks (migration 295), newest update first, after the position
 * `after`: down the partial index (agent_key_id, updated_at, id), so a page reads its own rows
 * whatever the agent's history. A status filter is applied on the way down the same index.
 */
export function listAgentTasks(db: Db, keyId: string, page: TaskPage): Promise<(PublicTaskRow & { context_id: string })[]> {
  return pageDownIndex(db, 'agent_key_id', keyId, page);
}

/** A task's A2A contextId (migration 300); undefined when no task has that id. */
export async function findContextId(db: Db, taskId: string): Promise<string | undefined> {
  const row = await db.selectFrom('tasks').select('context_id').where('id', '=', taskId).executeTakeFirst();
  return row?.context_id;
}

/** Whether the service issued this contextId: some task carries it (one index probe). */
export async function contextExists(db: Db, contextId: string): Promise<boolean> {
  const row = await db.selectFrom('tasks').select('id').where('context_id', '=', contextId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * One page of the tasks of an A2A context (migration 300), newest update first, after `after`:
 * down the index (context_id, updated_at, id), so a page reads its own rows whatever the history.
 */
export function listContextTasks(db: Db, contextId: string, page: TaskPage): Promise<(PublicTaskRow & { context_id: string })[]> {
  return pageDownIndex(db, 'context_id', contextId, page);
}

/** The two listings above: equality on the index's first column, then (updated_at, id) descending from `after`. */
function pageDownIndex(db: Db, column: 'agent_key_id' | 'context_id', value: string, page: TaskPage): Promise<(PublicTaskRow & { context_id: string })[]> {
  const { after, status } = page;
  return db
    .selectFrom('tasks')
    .select([...PUBLIC_COLUMNS, 'context_id'])
    .where(column, '=', value)
    .$if(status !== undefined, (q) => q.where('status', '=', status ?? ''))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([eb('updated_at', '<', after?.updated_at ?? ''), eb.and([eb('updated_at', '=', after?.updated_at ?? ''), eb('id', '<', after?.id ?? '')])]),
      ),
    )
    .orderBy(column, 'desc')
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

/** Counts are exact up to this many; a larger set is reported as this many (the count's cost stays bounded). */
export const COUNT_CAP = 10_000;

/** How many tasks an A2A list covers (a context's, or a verified agent's), at most COUNT_CAP. */
export async function countListedTasks(db: Db, scope: { contextId: string } | { agentKeyId: string }): Promise<number> {
  const inner = db
    .selectFrom('tasks')
    .select('id')
    .$if('contextId' in scope, (q) => q.where('context_id', '=', 'contextId' in scope ? scope.contextId : ''))
    .$if('agentKeyId' in scope, (q) => q.where('agent_key_id', '=', 'agentKeyId' in scope ? scope.agentKeyId : ''))
    .limit(COUNT_CAP);
  const row = await db
    .selectFrom(inner.as('listed'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
