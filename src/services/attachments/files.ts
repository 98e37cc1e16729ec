import { Readable } from 'node:stream';
import { ATTACHMENT_ID_PATTERN } from '../../domain/attachments.js';
import { AppError } from '../../domain/errors.js';
import { TASK_ID_PATTERN } from '../../domain/ids.js';
import { type AttachmentRow, findAttachment } from '../../store/attachments/attachments-repo.js';
import { type BlobInfo, findBlob, readBlob, readBlobRange } from '../../store/attachments/blobs-repo.js';
import { findTask } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';

/**
 * Reading files back out: for anyone holding the task id once the task is delivered (before that
 * the file does not exist for them: 404), for the operator at any time. Bytes stream from the
 * store a few chunks at a time, so a video is never held whole.
 */

export interface StoredFile {
  attachmentId: string;
  name: string;
  mediaType: string;
  size: number;
  sha256: string;
  blob: BlobInfo;
}

function missing(): AppError {
  return new AppError('not_found', 'No such file: check the url in the task’s attachments (files are public only once the task is delivered).');
}

async function locate(deps: Pick<ServiceDeps, 'store'>, taskId: string, attachmentId: string, audience: 'public' | 'operator'): Promise<AttachmentRow> {
  if (!TASK_ID_PATTERN.test(taskId) || !ATTACHMENT_ID_PATTERN.test(attachmentId)) throw missing();
  const task = await findTask(deps.store.db, taskId);
  if (!task) throw missing();
  if (audience === 'public') {
    // Only what was delivered (and signed): the frozen list, not whatever rows exist.
    const delivered =
      task.status === 'delivered' &&
      task.attachments !== null &&
      (JSON.parse(task.attachments) as { attachment_id: string }[]).some((a) => a.attachment_id === attachmentId);
    if (!delivered) throw missing();
  }
  const row = await findAttachment(deps.store.db, taskId, attachmentId);
  if (!row) throw missing();
  return row;
}

export async function openFile(deps: Pick<ServiceDeps, 'store'>, taskId: string, attachmentId: string, audience: 'public' | 'operator'): Promise<StoredFile> {
  const row = await locate(deps, taskId, attachmentId, audience);
  const blob = await findBlob(deps.store.db, row.sha256);
  if (!blob) throw missing();
  return { attachmentId: row.id, name: row.name, mediaType: row.media_type, size: row.size, sha256: row.sha256, blob };
}

/** Bytes start..end (inclusive) of a file, as a stream. */
export function fileStream(deps: Pick<ServiceDeps, 'store'>, file: StoredFile, start: number, end: number): Readable {
  return Readable.from(readBlobRange(deps.store.db, file.blob, start, end), { objectMode: false });
}

/** The preview of an image (WebP), or 404. */
export async function thumbnail(
  deps: Pick<ServiceDeps, 'store'>,
  taskId: string,
  attachmentId: string,
  audience: 'public' | 'operator',
): Promise<{ data: Buffer; sha256: string }> {
  const row = await locate(deps, taskId, attachmentId, audience);
  const data = row.thumbnail_sha256 ? await readBlob(deps.store.db, row.thumbnail_sha256) : undefined;
  if (!data || !row.thumbnail_sha256) throw missing();
  return { data, sha256: row.thumbnail_sha256 };
}
