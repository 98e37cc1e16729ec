import type { PublicAttachment } from '../domain/tasks/schemas.js';
import { readBlob } from '../store/attachments/blobs-repo.js';
import type { Db } from '../store/db.js';
import { findTask } from '../store/tasks/tasks-repo.js';

/**
 * Delivered files in the delivery mail: attached when they total at most 10 MiB, otherwise
 * listed as links with their hashes (mail servers commonly refuse messages over 10–25 MB). The
 * outbox row holds no bytes, only the task id: the files are frozen at delivery, so the worker
 * loads exactly the signed files from the store when it sends.
 */

export const MAIL_ATTACH_MAX_BYTES = 10 * 1024 * 1024;

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** The files a delivered task row lists (none before delivery). */
export function deliveredFiles(task: { attachments: string | null }): PublicAttachment[] {
  return task.attachments === null ? [] : (JSON.parse(task.attachments) as PublicAttachment[]);
}

export function attachedToMail(files: readonly PublicAttachment[]): boolean {
  return files.length > 0 && files.reduce((sum, f) => sum + f.size, 0) <= MAIL_ATTACH_MAX_BYTES;
}

/** At send time: the files to attach to a task's delivery mail (empty when they go as links). */
export async function loadMailAttachments(db: Db, taskId: string): Promise<MailAttachment[]> {
  const task = await findTask(db, taskId);
  if (!task) return [];
  const files = deliveredFiles(task);
  if (!attachedToMail(files)) return [];
  const out: MailAttachment[] = [];
  for (const file of files) {
    const content = await readBlob(db, file.sha256);
    // Erased since (retention): the mail still lists the file and its hash.
    if (content) out.push({ filename: file.name, contentType: file.media_type, content });
  }
  return out;
}
