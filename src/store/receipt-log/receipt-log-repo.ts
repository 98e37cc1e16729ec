import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db.js';

/** Every query of the public receipt log: `log_leaves`, `log_nodes`, `log_checkpoints` (migration 260). */

/** Rows per multi-row statement: well under SQLite's 32,766 bound parameters. */
const CHUNK = 1000;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** Writes a waiting leaf (in the caller's transaction: the one that issues the receipt). */
export async function insertLeaf(db: Db, leaf: { taskId: string | null; data: string; createdAt: string }): Promise<void> {
  await db.insertInto('log_leaves').values({ id: randomUUID(), task_id: leaf.taskId, data: leaf.data, created_at: leaf.createdAt, leaf_index: null }).execute();
}

/** Writes many waiting leaves at once (tests and benchmarks seeding a large log). */
export async function insertLeaves(db: Db, leaves: { taskId: string | null; data: string; createdAt: string }[]): Promise<void> {
  for (const part of chunks(leaves)) {
    await db
      .insertInto('log_leaves')
      .values(part.map((l) => ({ id: randomUUID(), task_id: l.taskId, data: l.data, created_at: l.createdAt, leaf_index: null })))
      .execute();
  }
}

/** The oldest waiting leaves (partial index log_leaves_waiting_idx). */
export async function waitingLeaves(db: Db, limit: number) {
  return db
    .selectFrom('log_leaves')
    .select(['id', 'task_id', 'data'])
    .where('leaf_index', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Gives waiting leaves their places and the tasks their `receipt_log_index`, one statement per
 * thousand rows (UPDATE … FROM (VALUES …), which both stores run).
 */
export async function assignLeafIndexes(db: Db, placed: { id: string; taskId: string | null; index: number }[]): Promise<void> {
  for (const part of chunks(placed)) {
    const values = sql.join(part.map((p) => sql`(${p.id}, cast(${p.index} as integer))`));
    await sql`update "log_leaves" set "leaf_index" = v.column2 from (values ${values}) as v where "log_leaves"."id" = v.column1`.execute(db);
    const tasks = part.filter((p) => p.taskId !== null);
    if (tasks.length === 0) continue;
    const taskValues = sql.join(tasks.map((p) => sql`(${p.taskId}, cast(${p.index} as integer))`));
    await sql`update "tasks" set "receipt_log_index" = v.column2 from (values ${taskValues}) as v where "tasks"."id" = v.column1`.execute(db);
  }
}

export async function insertNodes(db: Db, nodes: { level: number; index: number; hash: Buffer }[]): Promise<void> {
  for (const part of chunks(nodes)) {
    await db
      .insertInto('log_nodes')
      .values(part.map((n) => ({ level: n.level, idx: n.index, hash: n.hash.toString('base64') })))
      .execute();
  }
}

/** The stored nodes asked for, by `level/index`, in one statement. */
export async function findNodes(db: Db, wanted: { level: number; index: number }[]): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  if (wanted.length === 0) return found;
  for (const part of chunks(wanted)) {
    const rows = await db
      .selectFrom('log_nodes')
      .select(['level', 'idx', 'hash'])
      .where((eb) => eb.or(part.map((w) => eb.and([eb('level', '=', w.level), eb('idx', '=', w.index)]))))
      .execute();
    for (const row of rows) found.set(`${Number(row.level)}/${Number(row.idx)}`, Buffer.from(row.hash, 'base64'));
  }
  return found;
}

/** The nodes [from, to) of one level, in order (a tile's hashes). */
export async function nodeRange(db: Db, level: number, from: number, to: number): Promise<Buffer[]> {
  const rows = await db
    .selectFrom('log_nodes')
    .select('hash')
    .where('level', '=', level)
    .where('idx', '>=', from)
    .where('idx', '<', to)
    .orderBy('idx')
    .execute();
  return rows.map((row) => Buffer.from(row.hash, 'base64'));
}

/** The leaves [from, to), in order (an entry bundle). */
export async function leafRange(db: Db, from: number, to: number): Promise<string[]> {
  const rows = await db.selectFrom('log_leaves').select('data').where('leaf_index', '>=', from).where('leaf_index', '<', to).orderBy('leaf_index').execute();
  return rows.map((row) => row.data);
}

/** Where a task's receipt sits in the log; undefined while it waits (or for a task without one). */
export async function leafIndexOfTask(db: Db, taskId: string): Promise<number | undefined> {
  const row = await db.selectFrom('log_leaves').select('leaf_index').where('task_id', '=', taskId).where('leaf_index', 'is not', null).executeTakeFirst();
  return row?.leaf_index === null || row === undefined ? undefined : Number(row.leaf_index);
}

export async function latestCheckpoint(db: Db) {
  const row = await db.selectFrom('log_checkpoints').select(['seq', 'size', 'root', 'note', 'tsr']).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row && { seq: Number(row.seq), size: Number(row.size), root: row.root, note: row.note, tsr: row.tsr };
}

/**
 * Deletes up to `limit` checkpoints older than the latest, oldest first (retention): only the
 * latest is ever read (docs/receipt-log.md, "Retention"). Its primary key finds them.
 */
export async function deleteSupersededCheckpoints(db: Db, limit: number): Promise<number> {
  const latest = await db.selectFrom('log_checkpoints').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  if (latest === undefined) return 0;
  const old = await db.selectFrom('log_checkpoints').select('seq').where('seq', '<', latest.seq).orderBy('seq').limit(limit).execute();
  if (old.length === 0) return 0;
  const deleted = await db
    .deleteFrom('log_checkpoints')
    .where(
      'seq',
      'in',
      old.map((row) => row.seq),
    )
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

/** Keeps a checkpoint's checked time-stamp token (the first one stored wins). */
export async function setCheckpointTsr(db: Db, seq: number, tsr: string): Promise<void> {
  await db.updateTable('log_checkpoints').set({ tsr }).where('seq', '=', seq).where('tsr', 'is', null).execute();
}

export async function insertCheckpoint(db: Db, row: { seq: number; size: number; root: string; note: string; createdAt: string }): Promise<void> {
  await db
    .insertInto('log_checkpoints')
    .values({ seq: row.seq, size: row.size, root: row.root, note: row.note, created_at: row.createdAt, tsr: null })
    .execute();
}

/** Audit entries not chained yet, oldest first (partial index audit_log_waiting_idx). */
export async function unchainedAudit(db: Db, limit: number) {
  return db
    .selectFrom('audit_log')
    .select(['id', 'at', 'actor', 'action', 'task_id', 'details'])
    .where('hash', 'is', null)
    .orderBy('at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The chain's last entry: its place and hash (unique index on chain_index). */
export async function auditHead(db: Db): Promise<{ index: number; hash: string } | undefined> {
  const row = await db
    .selectFrom('audit_log')
    .select(['chain_index', 'hash'])
    .where('chain_index', 'is not', null)
    .orderBy('chain_index', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && row.chain_index !== null && row.hash !== null ? { index: Number(row.chain_index), hash: row.hash } : undefined;
}

/** Links entries into the chain, one statement per thousand. */
export async function chainAuditEntries(db: Db, links: { id: string; index: number; hash: string }[]): Promise<void> {
  for (const part of chunks(links)) {
    const values = sql.join(part.map((l) => sql`(${l.id}, cast(${l.index} as integer), ${l.hash})`));
    await sql`update "audit_log" set "chain_index" = v.column2, "hash" = v.column3 from (values ${values}) as v where "audit_log"."id" = v.column1`.execute(db);
  }
}

/** The chain in order from `from` (audit:verify), with each entry's stored hash. */
export async function auditChainPage(db: Db, from: number, limit: number) {
  return db
    .selectFrom('audit_log')
    .select(['id', 'at', 'actor', 'action', 'task_id', 'details', 'hash', 'chain_index'])
    .where('chain_index', '>=', from)
    .orderBy('chain_index')
    .limit(limit)
    .execute();
}
