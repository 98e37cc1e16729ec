import { type Kysely, sql } from 'kysely';

/**
 * The public receipt log (issue 52, contract "Receipts in a public, append-only log"):
 *
 * - `log_leaves`: every leaf, written in the transaction that issues its receipt; waiting ones
 *   (`leaf_index` NULL) are found through a partial index, so the sequencer never walks the
 *   integrated history. `leaf_index` is unique: no index is ever used twice, whatever races.
 * - `log_nodes`: the hash of every complete subtree, keyed (level, idx): tiles, proofs and roots
 *   are read by key, never computed by a scan.
 * - `log_checkpoints`: one signed note per integration, the latest by its primary key.
 * - `tasks.receipt_log_index`: where a task's receipt sits, for the public task.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('log_leaves')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('leaf_index', 'integer')
    .execute();
  await db.schema.createIndex('log_leaves_index_idx').on('log_leaves').column('leaf_index').unique().execute();
  await db.schema.createIndex('log_leaves_waiting_idx').on('log_leaves').columns(['created_at', 'id']).where(sql.ref('leaf_index'), 'is', null).execute();
  await db.schema
    .createIndex('log_leaves_task_idx')
    .on('log_leaves')
    .column('task_id')
    .where((eb) => eb('task_id', 'is not', null))
    .execute();
  await db.schema
    .createTable('log_nodes')
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_nodes_pk', ['level', 'idx'])
    .execute();
  await db.schema
    .createTable('log_checkpoints')
    .addColumn('size', 'integer', (c) => c.primaryKey())
    .addColumn('root', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('tasks').addColumn('receipt_log_index', 'integer').execute();
}
