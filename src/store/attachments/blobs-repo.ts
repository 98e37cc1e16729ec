import { sql } from 'kysely';
import { type Db, type DialectName, lockKeys } from '../db.js';

/**
 * Content-addressed file bytes (migration 070): one `attachment_blobs` row per distinct content,
 * its bytes in fixed-size `attachment_chunks` rows, so files stream in and out a chunk at a time
 * on SQLite and PostgreSQL alike. While an upload streams in, its chunks sit under a temporary
 * `upload-<ISO time>-<random>` key; finishing moves them under the SHA-256 (or drops them when
 * that content is already stored).
 */

/** Bytes per chunk row: every chunk but a blob's last is exactly this long. */
export const CHUNK_BYTES = 256 * 1024;
/** Chunks fetched per query when reading a blob out. */
const CHUNKS_PER_READ = 4;
const UPLOAD_PREFIX = 'upload-';

export function uploadKey(at: string, random: string): string {
  return `${UPLOAD_PREFIX}${at}-${random}`;
}

export async function writeChunk(db: Db, key: string, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('attachment_chunks').values({ blob_key: key, seq, data }).execute();
}

export async function deleteChunks(db: Db, key: string): Promise<void> {
  await db.deleteFrom('attachment_chunks').where('blob_key', '=', key).execute();
}

/** Chunks of uploads that began before `before` (ISO) and never finished: a crash mid-upload. */
export async function deleteStaleUploads(db: Db, before: string): Promise<void> {
  await db.deleteFrom('attachment_chunks').where('blob_key', '>=', UPLOAD_PREFIX).where('blob_key', '<', `${UPLOAD_PREFIX}${before}`).execute();
}

/**
 * Serializes, per content, filing a blob and deleting it when unreferenced (PostgreSQL advisory
 * locks, sorted so two transactions never wait on each other): without it, retention could delete
 * a blob in the instant an upload of the same bytes decides to reuse it. Call inside a transaction.
 */
export async function lockBlobs(db: Db, dialect: DialectName, shas: string[]): Promise<void> {
  await lockKeys(
    db,
    dialect,
    [...new Set(shas)].sort().map((sha) => `blob:${sha}`),
  );
}

/**
 * Files the chunks written under `key` as the blob `sha256`: the first upload of a content keeps
 * its chunks, a later one of the same content drops its copy. Run inside the transaction that
 * records the attachment.
 */
export async function finishBlob(db: Db, key: string, blob: { sha256: string; size: number; createdAt: string }): Promise<void> {
  const inserted = await db
    .insertInto('attachment_blobs')
    .values({ sha256: blob.sha256, size: blob.size, chunk_bytes: CHUNK_BYTES, created_at: blob.createdAt })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
    await db.updateTable('attachment_chunks').set({ blob_key: blob.sha256 }).where('blob_key', '=', key).execute();
  } else {
    await deleteChunks(db, key);
  }
}

export interface BlobInfo {
  sha256: string;
  size: number;
  /** Bytes per chunk of this blob. */
  chunkBytes: number;
}

export async function findBlob(db: Db, sha256: string): Promise<BlobInfo | undefined> {
  const row = await db.selectFrom('attachment_blobs').select(['sha256', 'size', 'chunk_bytes']).where('sha256', '=', sha256).executeTakeFirst();
  return row ? { sha256: row.sha256, size: Number(row.size), chunkBytes: Number(row.chunk_bytes) } : undefined;
}

/** Bytes `start`..`end` (inclusive) of a blob, a few chunks per query. */
export async function* readBlobRange(db: Db, blob: BlobInfo, start: number, end: number): AsyncGenerator<Buffer> {
  if (blob.size === 0 || end < start) return;
  const first = Math.floor(start / blob.chunkBytes);
  const last = Math.floor(end / blob.chunkBytes);
  for (let from = first; from <= last; from += CHUNKS_PER_READ) {
    const to = Math.min(last, from + CHUNKS_PER_READ - 1);
    const rows = await db
      .selectFrom('attachment_chunks')
      .select(['seq', 'data'])
      .where('blob_key', '=', blob.sha256)
      .where('seq', '>=', from)
      .where('seq', '<=', to)
      .orderBy('seq')
      .execute();
    if (rows.length !== to - from + 1) throw new Error(`blob ${blob.sha256} is missing chunks ${from}..${to}`);
    for (const row of rows) {
      const offset = Number(row.seq) * blob.chunkBytes;
      const data = Buffer.from(row.data);
      const sliceFrom = Math.max(0, start - offset);
      const sliceTo = Math.min(data.length, end - offset + 1);
      if (sliceTo > sliceFrom) yield data.subarray(sliceFrom, sliceTo);
    }
  }
}

/** A whole blob in memory (thumbnails and mail attachments, both small). */
export async function readBlob(db: Db, sha256: string): Promise<Buffer | undefined> {
  const blob = await findBlob(db, sha256);
  if (!blob) return undefined;
  const parts: Buffer[] = [];
  for await (const part of readBlobRange(db, blob, 0, blob.size - 1)) parts.push(part);
  return Buffer.concat(parts);
}

/**
 * Deletes those of `candidates` no attachment refers to any more (as file or as thumbnail). Takes
 * the blobs' locks first, so the check sees any upload that reused one of them meanwhile.
 */
export async function deleteUnreferencedBlobs(db: Db, dialect: DialectName, candidates: string[]): Promise<void> {
  const unique = [...new Set(candidates)];
  if (unique.length === 0) return;
  await lockBlobs(db, dialect, unique);
  const orphans = await db
    .selectFrom('attachment_blobs as b')
    .select('b.sha256')
    .where('b.sha256', 'in', unique)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('attachments as a')
            .select(sql`1`.as('one'))
            .where((eb) => eb.or([eb('a.sha256', '=', eb.ref('b.sha256')), eb('a.thumbnail_sha256', '=', eb.ref('b.sha256'))])),
        ),
      ),
    )
    .execute();
  const gone = orphans.map((o) => o.sha256);
  if (gone.length === 0) return;
  await db.deleteFrom('attachment_chunks').where('blob_key', 'in', gone).execute();
  await db.deleteFrom('attachment_blobs').where('sha256', 'in', gone).execute();
}
