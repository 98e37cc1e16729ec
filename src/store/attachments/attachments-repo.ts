import type { Selectable } from 'kysely';
import type { Db, DialectName } from '../db.js';
import type { AttachmentsTable } from '../schema.js';
import { deleteUnreferencedBlobs } from './blobs-repo.js';

/** The files attached to tasks (migration 070); their bytes are blobs (blobs-repo.ts). */

export type AttachmentRow = Selectable<AttachmentsTable>;

export async function insertAttachment(db: Db, row: AttachmentRow): Promise<void> {
  await db.insertInto('attachments').values(row).execute();
}

/** A task's files in the order they were attached. */
export async function listAttachments(db: Db, taskId: string): Promise<AttachmentRow[]> {
  const rows = await db.selectFrom('attachments').selectAll().where('task_id', '=', taskId).orderBy('position').execute();
  return rows.map(normalize);
}

/** The position the next file of a task takes (call under the task's lock). */
export async function nextPosition(db: Db, taskId: string): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.max('position').as('last'))
    .where('task_id', '=', taskId)
    .executeTakeFirst();
  return Number(row?.last ?? 0) + 1;
}

export async function countAttachments(db: Db, taskId: string): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('task_id', '=', taskId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function findAttachment(db: Db, taskId: string, attachmentId: string): Promise<AttachmentRow | undefined> {
  const row = await db.selectFrom('attachments').selectAll().where('id', '=', attachmentId).where('task_id', '=', taskId).executeTakeFirst();
  return row ? normalize(row) : undefined;
}

/** Removes one file; its bytes go when nothing else refers to them. */
export async function deleteAttachment(db: Db, dialect: DialectName, row: AttachmentRow): Promise<void> {
  await db.deleteFrom('attachments').where('id', '=', row.id).execute();
  await deleteUnreferencedBlobs(db, dialect, row.thumbnail_sha256 ? [row.sha256, row.thumbnail_sha256] : [row.sha256]);
}

/**
 * Erases every file of a task and the blobs no other task shares (retention, docs/operations.md#retention, calls
 * this when it erases a task). Pass the transaction that erases the task, and the store's dialect
 * (`deps.store.dialect`).
 */
export async function deleteAttachmentsOfTask(db: Db, dialect: DialectName, taskId: string): Promise<number> {
  const rows = await db.selectFrom('attachments').select(['sha256', 'thumbnail_sha256']).where('task_id', '=', taskId).execute();
  if (rows.length === 0) return 0;
  await db.deleteFrom('attachments').where('task_id', '=', taskId).execute();
  await deleteUnreferencedBlobs(
    db,
    dialect,
    rows.flatMap((r) => (r.thumbnail_sha256 ? [r.sha256, r.thumbnail_sha256] : [r.sha256])),
  );
  return rows.length;
}

function normalize(row: AttachmentRow): AttachmentRow {
  // pg returns bigint as a number through db.ts's parser; SQLite may hand back a bigint-safe number.
  return { ...row, size: Number(row.size), metadata_kept: Number(row.metadata_kept), position: Number(row.position) };
}
