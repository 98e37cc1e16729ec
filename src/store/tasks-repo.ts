import type { CompiledQuery, Insertable, Selectable } from 'kysely';
import type { PublicTask } from '../domain/schemas.js';
import type { StatusEntry, TaskStatus, TaskType, Source } from '../domain/task.js';
import type { Db, Store } from './db.js';
import { reusableQuery } from './prepared.js';
import type { TasksTable } from './schema.js';

export type TaskRow = Selectable<TasksTable>;

/** The columns the public task is made of: never contact_email, client_hash or request_json. */
const PUBLIC_COLUMNS = [
  'id', 'status', 'task_type', 'description', 'location_required', 'location_detail', 'deadline', 'output_format', 'budget_usd',
  'requester', 'source', 'created_at', 'updated_at', 'status_history', 'operator_notes', 'seen_by_operator_at', 'eta',
  'receipt', 'deliverable_sha256', 'receipt_issued_at',
] as const satisfies readonly (keyof TaskRow)[];
export type PublicTaskRow = Pick<TaskRow, (typeof PUBLIC_COLUMNS)[number]>;

/** Every column of the tasks table; the check below fails to compile when one is missing. */
const TASK_COLUMNS = [
  'id', 'status', 'task_type', 'description', 'dedupe_key', 'location_required', 'location_detail', 'deadline', 'output_format',
  'budget_usd', 'requester', 'source', 'delivery', 'contact_email', 'email_unverified', 'client_hash', 'created_at', 'updated_at',
  'status_history', 'operator_notes', 'seen_by_operator_at', 'eta', 'accepted_at', 'delivered_at', 'rejected_at', 'receipt',
  'deliverable_sha256', 'receipt_issued_at', 'request_sha256', 'request_json',
] as const satisfies readonly (keyof TasksTable)[];
const allColumnsListed: Exclude<keyof TasksTable, (typeof TASK_COLUMNS)[number]> extends never ? true : never = true;
void allColumnsListed;

// Submitting inserts one task per request with always the same columns: compile that once.
const insertQuery = reusableQuery(
  (db: Db, ...values: unknown[]) => db.insertInto('tasks').values(Object.fromEntries(TASK_COLUMNS.map((c, i) => [c, values[i]])) as Insertable<TasksTable>),
  ...TASK_COLUMNS.map((c): unknown => `\u0000${c}`),
);

export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await db.executeQuery(insertQuery(db, ...TASK_COLUMNS.map((c) => row[c])));
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

interface ReadCache {
  statement: { get(id: string): unknown };
  tasks: Map<string, { task: Readonly<PublicTask>; changes: number }>;
}
const readCaches = new WeakMap<object, ReadCache>();
/** Tasks kept per store; a few hundred kilobytes at most. */
const READ_CACHE_SIZE = 1000;

/**
 * The public status read: the hottest path of the service, and polled again and again for the
 * same task. On SQLite it runs one cached prepared statement directly, in raw mode (an array per
 * row: building an object per row in the driver costs more than the lookup), and keeps the public
 * task (frozen: callers share it) until any statement changes a task (Store.taskChanges). On
 * PostgreSQL, where other instances write too, it runs the precompiled query above every time.
 */
export async function findPublicTask(store: Store, id: string): Promise<Readonly<PublicTask> | undefined> {
  const { sqlite, taskChanges } = store;
  // While a transaction is open on the one connection, a direct read would see its uncommitted
  // writes: wait for it through Kysely instead.
  if (!sqlite || !taskChanges || sqlite.inTransaction) {
    const row = await findTask(store.db, id);
    return row ? toPublicTask(row) : undefined;
  }
  let cache = readCaches.get(sqlite);
  if (!cache) {
    cache = { statement: sqlite.prepare(`SELECT ${PUBLIC_COLUMNS.join(', ')} FROM tasks WHERE id = ?`).raw(true), tasks: new Map() };
    readCaches.set(sqlite, cache);
  }
  const cached = cache.tasks.get(id);
  if (cached && cached.changes === taskChanges.count) return cached.task;
  const values = cache.statement.get(id) as unknown[] | undefined;
  if (!values) return undefined;
  const row: Record<string, unknown> = {};
  for (let i = 0; i < PUBLIC_COLUMNS.length; i++) row[PUBLIC_COLUMNS[i] as string] = values[i];
  const task = toPublicTask(row as PublicTaskRow);
  for (const entry of task.status_history) Object.freeze(entry);
  Object.freeze(task.status_history);
  Object.freeze(task);
  if (cache.tasks.size >= READ_CACHE_SIZE) cache.tasks.delete(cache.tasks.keys().next().value as string);
  cache.tasks.set(id, { task, changes: taskChanges.count });
  return task;
}

export async function updateTask(db: Db, id: string, changes: Partial<TasksTable>): Promise<void> {
  await db.updateTable('tasks').set(changes).where('id', '=', id).execute();
}

export function statusHistory(row: Pick<TaskRow, 'status_history'>): StatusEntry[] {
  return JSON.parse(row.status_history) as StatusEntry[];
}

/** The task as the public status endpoint returns it: never the contact e-mail or the client. */
export function toPublicTask(row: PublicTaskRow): PublicTask {
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
  };
  if (row.receipt !== null) {
    task.receipt = row.receipt;
    task.deliverable_sha256 = row.deliverable_sha256 ?? '';
    task.receipt_issued_at = row.receipt_issued_at ?? '';
  }
  return task;
}

/** When each task created since `since` was created and first seen (the response-target figure). */
export async function firstViewTimes(db: Db, since: string): Promise<Pick<TaskRow, 'created_at' | 'seen_by_operator_at'>[]> {
  return db.selectFrom('tasks').select(['created_at', 'seen_by_operator_at']).where('created_at', '>=', since).execute();
}

/** Tasks waiting that the operator has not opened yet (the console's title count). */
export async function countUnseen(db: Db): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select(db.fn.countAll<number>().as('n'))
    .where('status', '=', 'submitted')
    .where('seen_by_operator_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
