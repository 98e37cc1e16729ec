import type { CompiledQuery, Insertable, Selectable } from 'kysely';
import type { PublicAttachment, PublicTask } from '../domain/schemas.js';
import type { Source, StatusEntry, TaskStatus, TaskType } from '../domain/task.js';
import { isSqlite, padded, writeChunks } from './batches.js';
import type { Db, Store } from './db.js';
import { reusableQuery } from './prepared.js';
import type { TasksTable } from './schema.js';
import type { PublicTaskCache } from './task-cache.js';

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
] as const satisfies readonly (keyof TasksTable)[];
const allColumnsListed: Exclude<keyof TasksTable, (typeof TASK_COLUMNS)[number]> extends never ? true : never = true;
void allColumnsListed;

/**
 * The insert of `count` tasks, always with the same columns, compiled once per row count (and
 * dialect): only the counts batches.ts cuts a batch into on SQLite (powers of two up to 64), and
 * one row on both stores.
 */
const insertQueries = new Map<number, (db: Db, ...values: unknown[]) => CompiledQuery>();

function insertQuery(count: number): (db: Db, ...values: unknown[]) => CompiledQuery {
  let query = insertQueries.get(count);
  if (!query) {
    const width = TASK_COLUMNS.length;
    const row = (values: unknown[], r: number) => Object.fromEntries(TASK_COLUMNS.map((c, i) => [c, values[r * width + i]])) as Insertable<TasksTable>;
    query = reusableQuery(
      (db: Db, ...values: unknown[]) => db.insertInto('tasks').values(Array.from({ length: count }, (_, r) => row(values, r))),
      ...Array.from({ length: count }, (_, r) => TASK_COLUMNS.map((c): unknown => `\u0000${r}:${c}`)).flat(),
    );
    insertQueries.set(count, query);
  }
  return query;
}

export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await db.executeQuery(insertQuery(1)(db, ...TASK_COLUMNS.map((c) => row[c])));
}

/**
 * Inserts the tasks of a batch of submissions: on PostgreSQL in one statement, on SQLite in one
 * per chunk (batches.ts), each through its compiled insert.
 */
export async function insertTasks(db: Db, rows: TaskRow[]): Promise<void> {
  const compiled = isSqlite(db);
  for (const chunk of writeChunks(db, rows, TASK_COLUMNS.length)) {
    if (compiled || chunk.length === 1) {
      await db.executeQuery(insertQuery(chunk.length)(db, ...chunk.flatMap((row) => TASK_COLUMNS.map((c) => row[c]))));
    } else {
      await db
        .insertInto('tasks')
        .values(chunk as Insertable<TasksTable>[])
        .execute();
    }
  }
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
 * same task. Served from the cache (store/task-cache.ts) while it holds the task; otherwise, on
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
 * status read's fast lane (http/fast-reads.ts). Nothing while SQLite's one connection is inside
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
  // Frozen at delivery, with absolute URLs; absent before (contract "Evidence").
  if (row.attachments !== null) task.attachments = JSON.parse(row.attachments) as PublicAttachment[];
  return task;
}

/**
 * Updates a task only while it still has `fromStatus` (the operator's PATCH): two racing operators
 * cannot both move it. False when the status changed meanwhile.
 */
export async function updateTaskIfStatus(db: Db, id: string, fromStatus: string, changes: Partial<TasksTable>): Promise<boolean> {
  const result = await db.updateTable('tasks').set(changes).where('id', '=', id).where('status', '=', fromStatus).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Stamps the operator's first view unless already stamped; true when this call stamped it. */
export async function markSeen(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ seen_by_operator_at: at })
    .where('id', '=', id)
    .where('seen_by_operator_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Recent tasks with this dedupe key (duplicate detection). Looked up by the dedupe key alone (its
 * index is selective: identical descriptions are rare); the caller matches the client or e-mail.
 * Given an OR, a planner may otherwise pick the client index and scan every task that client sent.
 */
export type DedupeMatch = Pick<TaskRow, 'id' | 'client_hash' | 'contact_email' | 'dedupe_key'>;

/** Tasks created after `since` with any of these dedupe keys, newest first. */
export async function findByDedupeKeys(db: Db, dedupeKeys: string[], since: string): Promise<DedupeMatch[]> {
  if (dedupeKeys.length === 0) return [];
  return db
    .selectFrom('tasks')
    .select(['id', 'client_hash', 'contact_email', 'dedupe_key'])
    .where('dedupe_key', 'in', padded([...new Set(dedupeKeys)]))
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Type and status of each existing task among `ids` (a message's linked tasks, the console's message list). */
export async function taskSummaries(db: Db, ids: string[]): Promise<Pick<TaskRow, 'id' | 'task_type' | 'status'>[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('tasks').select(['id', 'task_type', 'status']).where('id', 'in', ids).execute();
}

/** How many tasks are in each status, over all time or over tasks created since `since`. */
export async function countTasksByStatus(db: Db, since?: string): Promise<Record<string, number>> {
  let query = db.selectFrom('tasks').select((eb) => ['status', eb.fn.countAll<number>().as('n')]);
  if (since !== undefined) query = query.where('created_at', '>=', since);
  const rows = await query.groupBy('status').execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/** Creation, first view and acceptance times of tasks created since `since` that were seen or accepted. */
export async function taskTimings(db: Db, since: string): Promise<Pick<TaskRow, 'created_at' | 'seen_by_operator_at' | 'accepted_at'>[]> {
  return (
    db
      .selectFrom('tasks')
      .select(['created_at', 'seen_by_operator_at', 'accepted_at'])
      .where('created_at', '>=', since)
      // Test tasks (issue 19) say nothing about how fast a human answers real work.
      .where('is_test', '=', 0)
      .where((eb) => eb.or([eb('seen_by_operator_at', 'is not', null), eb('accepted_at', 'is not', null)]))
      .execute()
  );
}

/** A keyset position in a newest-first list. */
export interface PagePosition {
  created_at: string;
  id: string;
}

/** Tasks newest first, optionally of some statuses, strictly after `after`; at most `limit` rows. */
export async function listTasks(
  db: Db,
  options: { statuses?: string[] | undefined; isTest?: boolean | undefined; after?: PagePosition | undefined; limit: number; order?: 'newest' | 'oldest' },
): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll();
  const { statuses, after } = options;
  // Newest first by default; oldest first is the console's queue (the longest wait on top).
  const [past, direction] = options.order === 'oldest' ? (['>', 'asc'] as const) : (['<', 'desc'] as const);
  if (statuses !== undefined) query = query.where('status', 'in', statuses);
  if (options.isTest !== undefined) query = query.where('is_test', '=', options.isTest ? 1 : 0);
  if (after)
    query = query.where((eb) => eb.or([eb('created_at', past, after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', past, after.id)])]));
  return query.orderBy('created_at', direction).orderBy('id', direction).limit(options.limit).execute();
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

/** Whether a task with this id is stored (the import skips those). */
export async function taskExists(db: Db, id: string): Promise<boolean> {
  const row = await db.selectFrom('tasks').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/** Creation time of the oldest task still waiting on the operator (the metrics' queue age), or null. */
export async function oldestOpenTaskCreatedAt(db: Db, openStatuses: readonly string[]): Promise<string | null> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.min<string | null>('created_at').as('oldest'))
    .where('status', 'in', [...openStatuses])
    .executeTakeFirst();
  return row?.oldest ?? null;
}

/**
 * Ids of up to `limit` tasks in a final status since before `before` (delivered_at or rejected_at)
 * whose private fields retention has not erased yet, oldest first.
 */
export async function finalTasksToErase(db: Db, finalStatuses: readonly string[], before: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('erased_at', 'is', null)
    .where('status', 'in', [...finalStatuses])
    .where((eb) => eb(eb.fn.coalesce('delivered_at', 'rejected_at', 'updated_at'), '<', before))
    .orderBy('created_at')
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
