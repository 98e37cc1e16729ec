import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * Evidence files (contract "Evidence: attachments in deliverables"). Bytes live once per content
 * in `attachment_blobs` (keyed by SHA-256) and are cut into `attachment_chunks` rows, so a file is
 * written and read a chunk at a time on both stores and every instance serves every file.
 * `attachments` names the files of a task; a blob is deleted with its last reference.
 * `tasks.attachments` freezes the public list (JSON) at delivery, so the status read stays one row.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema
    .createTable('attachment_blobs')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('chunk_bytes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // blob_key is the SHA-256 of a stored blob, or `upload-<ISO time>-<random>` while an upload streams in.
  await db.schema
    .createTable('attachment_chunks')
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_chunks_pk', ['blob_key', 'seq'])
    .execute();
  await db.schema
    .createTable('attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('media_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('thumbnail_sha256', 'text')
    .addColumn('metadata_kept', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('attachments_task_idx').on('attachments').columns(['task_id', 'position']).execute();
  await db.schema.createIndex('attachments_sha_idx').on('attachments').column('sha256').execute();
  await db.schema.createIndex('attachments_thumb_idx').on('attachments').column('thumbnail_sha256').execute();
  await db.schema.alterTable('tasks').addColumn('attachments', 'text').execute();
}
