import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  ATTACHMENT_ID_PATTERN,
  dispositionFileName,
  effectiveMediaType,
  fallbackName,
  isImageType,
  newAttachmentId,
  SNIFF_BYTES,
  safeFileName,
} from '../../domain/attachments.js';
import { AppError } from '../../domain/errors.js';
import { TASK_ID_PATTERN } from '../../domain/ids.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import {
  type AttachmentRow,
  countAttachments,
  deleteAttachment,
  findAttachment,
  insertAttachment,
  listAttachments,
  nextPosition,
} from '../../store/attachments/attachments-repo.js';
import { CHUNK_BYTES, deleteChunks, deleteStaleUploads, finishBlob, lockBlobs, uploadKey, writeChunk } from '../../store/attachments/blobs-repo.js';
import { type Db, withTransaction } from '../../store/db.js';
import { findTask, lockTask, type TaskRow } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';
import { processedType, processImage } from './images.js';

/**
 * The operator attaches evidence files to an accepted task (contract "Evidence: attachments in
 * deliverables"). One use case for the admin API and the console. The upload streams: bytes are
 * counted as they arrive and the request is cut with 413 the moment it passes
 * ATTACHMENT_MAX_BYTES. Images are held in memory once (sharp needs the whole image) to strip
 * their metadata; every other file goes to the store chunk by chunk. Whatever fails on the way
 * leaves nothing behind.
 */

export interface UploadInput {
  body: Readable;
  /** The Content-Type header as sent (only a hint: the bytes decide). */
  declaredType: string | undefined;
  /** The Content-Disposition header as sent. */
  disposition: string | undefined;
  /** The Content-Length header, when sent: refused at once when over the limit. */
  contentLength: number | undefined;
}

/** The 201 body of an upload (contract: {attachment_id, name, media_type, size, sha256}). */
export interface UploadedAttachment {
  attachment_id: string;
  name: string;
  media_type: string;
  size: number;
  sha256: string;
}

/** A file as the operator sees it before delivery. */
export interface OperatorAttachment extends UploadedAttachment {
  created_at: string;
  /** Image metadata (EXIF, GPS …) was kept because the task has location_required. */
  metadata_kept: boolean;
  has_thumbnail: boolean;
}

/** Unfinished uploads older than this are a crashed process's leftovers. */
const STALE_UPLOAD_MS = 3600_000;

function notFound(taskId: string): AppError {
  return new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
}

function tooLarge(deps: ServiceDeps): AppError {
  return new AppError('payload_too_large', `A file may be at most ${deps.config.attachments.maxBytes} bytes (ATTACHMENT_MAX_BYTES).`, {
    limit: 'attachment_max_bytes',
  });
}

/** Only an accepted task takes (or gives up) files: before acceptance there is nothing to prove, after delivery they are signed. */
function assertOpen(task: TaskRow, what: string): void {
  if (task.status !== 'accepted') {
    throw new AppError('invalid_transition', `Files can be ${what} only while the task is accepted; it is ${task.status}.`, {
      from: task.status,
      to: task.status,
    });
  }
}

async function openTask(db: Db, taskId: string, what: string): Promise<TaskRow> {
  const task = TASK_ID_PATTERN.test(taskId) ? await findTask(db, taskId) : undefined;
  if (!task) throw notFound(taskId);
  assertOpen(task, what);
  return task;
}

async function assertRoom(db: Db, deps: ServiceDeps, taskId: string): Promise<void> {
  const max = deps.config.attachments.maxPerTask;
  if ((await countAttachments(db, taskId)) >= max) {
    throw new AppError('payload_too_large', `A task may carry at most ${max} files (ATTACHMENTS_MAX_PER_TASK).`, { limit: 'attachments_per_task' });
  }
}

/** Reads the body, counting; throws 413 as soon as it passes `max` (and stops reading). */
async function* limited(body: Readable, max: number, onTooLarge: () => AppError): AsyncGenerator<Buffer, void, undefined> {
  let total = 0;
  // Stopping early must not destroy the request: the refusal still has to reach the client
  // (the adapter closes the connection after answering, so the rest is never read).
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += buffer.length;
    if (total > max) {
      body.pause();
      throw onTooLarge();
    }
    yield buffer;
  }
}

interface Stored {
  sha256: string;
  size: number;
  mediaType: string;
  thumbnail?: { sha256: string; size: number; key: string } | undefined;
  /** The temporary chunk key of the file itself. */
  key: string;
  metadataKept: boolean;
}

/** Writes a buffer as chunks under a fresh temporary key. */
async function writeBuffer(db: Db, key: string, data: Buffer): Promise<void> {
  for (let seq = 0; seq * CHUNK_BYTES < data.length; seq++) {
    await writeChunk(db, key, seq, data.subarray(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES));
  }
}

export async function uploadAttachment(deps: ServiceDeps, actor: Actor, taskId: string, input: UploadInput): Promise<UploadedAttachment> {
  const db = deps.store.db;
  const max = deps.config.attachments.maxBytes;
  const task = await openTask(db, taskId, 'attached');
  await assertRoom(db, deps, taskId);
  if (input.contentLength !== undefined && input.contentLength > max) throw tooLarge(deps);
  const now = deps.clock.now();
  const keyBase = `${iso(now)}-${randomBytes(8).toString('hex')}`;
  const keys: string[] = [uploadKey(keyBase, 'f'), uploadKey(keyBase, 't')];
  await deleteStaleUploads(db, iso(new Date(now.getTime() - STALE_UPLOAD_MS))).catch(() => undefined);
  try {
    const stored = await receive(deps, input, task, keys[0] as string, keys[1] as string, max);
    const name = safeFileName(dispositionFileName(input.disposition), fallbackName(stored.mediaType));
    const row: AttachmentRow = {
      id: newAttachmentId(now),
      task_id: taskId,
      name,
      media_type: stored.mediaType,
      size: stored.size,
      sha256: stored.sha256,
      thumbnail_sha256: stored.thumbnail?.sha256 ?? null,
      metadata_kept: stored.metadataKept ? 1 : 0,
      position: 0,
      created_at: iso(deps.clock.now()),
    };
    await withTransaction(db, async (trx) => {
      // Under the task's lock: a delivery either sees this file or refuses it (it is delivered).
      await lockTask(trx, deps.store.dialect, taskId);
      await openTask(trx, taskId, 'attached');
      await assertRoom(trx, deps, taskId);
      await lockBlobs(trx, deps.store.dialect, stored.thumbnail ? [stored.sha256, stored.thumbnail.sha256] : [stored.sha256]);
      await finishBlob(trx, stored.key, { sha256: stored.sha256, size: stored.size, createdAt: row.created_at });
      if (stored.thumbnail)
        await finishBlob(trx, stored.thumbnail.key, { sha256: stored.thumbnail.sha256, size: stored.thumbnail.size, createdAt: row.created_at });
      await insertAttachment(trx, { ...row, position: await nextPosition(trx, taskId) });
      await recordAudit(trx, deps, { actor, action: 'attachment.added', taskId, details: { attachment_id: row.id, size: row.size, sha256: row.sha256 } });
    });
    deps.log.info({ task_id: taskId, attachment_id: row.id, size: row.size, media_type: row.media_type }, 'attachment added');
    return { attachment_id: row.id, name: row.name, media_type: row.media_type, size: row.size, sha256: row.sha256 };
  } catch (error) {
    // An interrupted or refused upload leaves nothing: its chunks go (finished blobs are untouched).
    for (const key of keys) await deleteChunks(db, key).catch(() => undefined);
    throw error;
  }
}

/**
 * The whole image, for sharp. With a Content-Length the bytes are copied straight into one buffer
 * of that size, so the image is in memory once; without one the parts are joined at the end.
 */
async function collect(first: Buffer, rest: AsyncGenerator<Buffer, void, undefined> | undefined, contentLength: number | undefined): Promise<Buffer> {
  if (contentLength !== undefined && contentLength >= first.length) {
    const whole = Buffer.allocUnsafe(contentLength);
    first.copy(whole, 0);
    let offset = first.length;
    if (rest) {
      for await (const part of rest) {
        if (offset + part.length > contentLength)
          throw new AppError('malformed_request', 'The body is longer than its Content-Length.', { details: ['body is longer than Content-Length'] });
        part.copy(whole, offset);
        offset += part.length;
      }
    }
    return offset === contentLength ? whole : whole.subarray(0, offset);
  }
  const parts: Buffer[] = [first];
  if (rest) for await (const part of rest) parts.push(part);
  return Buffer.concat(parts);
}

/** Streams the body into the store (or, for an image, through sharp first). */
async function receive(deps: ServiceDeps, input: UploadInput, task: TaskRow, key: string, thumbKey: string, max: number): Promise<Stored> {
  const db = deps.store.db;
  const source = limited(input.body, max, () => tooLarge(deps));
  // Collect the first bytes to learn what the file really is.
  const head: Buffer[] = [];
  let headLength = 0;
  let step = await source.next();
  while (!step.done) {
    head.push(step.value);
    headLength += step.value.length;
    if (headLength >= SNIFF_BYTES) break;
    step = await source.next();
  }
  const first = Buffer.concat(head);
  const mediaType = effectiveMediaType(first, input.declaredType);
  const keepMetadata = task.location_required === 1;

  if (isImageType(mediaType)) {
    const image = await processImage(await collect(first, step.done === true ? undefined : source, input.contentLength), mediaType, keepMetadata);
    await writeBuffer(db, key, image.data);
    const stored: Stored = {
      sha256: createHash('sha256').update(image.data).digest('hex'),
      size: image.data.length,
      mediaType: keepMetadata ? mediaType : processedType(mediaType),
      key,
      metadataKept: keepMetadata,
    };
    if (image.thumbnail) {
      await writeBuffer(db, thumbKey, image.thumbnail);
      stored.thumbnail = { sha256: createHash('sha256').update(image.thumbnail).digest('hex'), size: image.thumbnail.length, key: thumbKey };
    }
    return stored;
  }

  // Any other file: hashed and written a chunk at a time, never held whole.
  const hash = createHash('sha256');
  let pending: Buffer[] = [first];
  let pendingLength = first.length;
  let size = 0;
  let seq = 0;
  const flush = async (all: boolean) => {
    let buffer: Buffer = Buffer.concat(pending);
    while (buffer.length >= CHUNK_BYTES || (all && buffer.length > 0)) {
      const chunk = buffer.subarray(0, CHUNK_BYTES);
      await writeChunk(db, key, seq++, chunk);
      buffer = buffer.subarray(chunk.length);
    }
    pending = [buffer];
    pendingLength = buffer.length;
  };
  hash.update(first);
  size += first.length;
  if (!step.done) {
    for await (const part of source) {
      hash.update(part);
      size += part.length;
      pending.push(part);
      pendingLength += part.length;
      if (pendingLength >= CHUNK_BYTES) await flush(false);
    }
  }
  await flush(true);
  return { sha256: hash.digest('hex'), size, mediaType, key, metadataKept: false };
}

export async function removeAttachment(deps: ServiceDeps, actor: Actor, taskId: string, attachmentId: string): Promise<void> {
  await withTransaction(deps.store.db, async (trx) => {
    await lockTask(trx, deps.store.dialect, taskId);
    await openTask(trx, taskId, 'removed');
    const row = ATTACHMENT_ID_PATTERN.test(attachmentId) ? await findAttachment(trx, taskId, attachmentId) : undefined;
    if (!row) throw new AppError('not_found', `Task ${taskId.slice(0, 80)} has no file ${attachmentId.slice(0, 80)}.`);
    await deleteAttachment(trx, deps.store.dialect, row);
    await recordAudit(trx, deps, { actor, action: 'attachment.removed', taskId, details: { attachment_id: attachmentId } });
  });
  deps.log.info({ task_id: taskId, attachment_id: attachmentId }, 'attachment removed');
}

/** The operator's list (any status): what will be, or was, delivered. */
export async function operatorAttachments(deps: ServiceDeps, taskId: string): Promise<OperatorAttachment[]> {
  const task = TASK_ID_PATTERN.test(taskId) ? await findTask(deps.store.db, taskId) : undefined;
  if (!task) throw notFound(taskId);
  const rows = await listAttachments(deps.store.db, taskId);
  return rows.map((row) => ({
    attachment_id: row.id,
    name: row.name,
    media_type: row.media_type,
    size: row.size,
    sha256: row.sha256,
    created_at: row.created_at,
    metadata_kept: row.metadata_kept === 1,
    has_thumbnail: row.thumbnail_sha256 !== null,
  }));
}
