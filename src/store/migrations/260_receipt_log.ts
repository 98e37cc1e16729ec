import { type Kysely, sql } from 'kysely';
import { AUDIT_CHAIN_START, auditEntryHash } from '../../domain/team/audit-chain.js';

/**
 * The public receipt log (docs/receipt-log.md, contract "Receipts in a public, append-only log"):
 *
 * - `log_leaves`: every leaf, written in the transaction that issues its receipt; waiting ones
 *   (`leaf_index` NULL) are found through a partial index, so the sequencer never walks the
 *   integrated history. `leaf_index` is unique: no index is ever used twice, whatever races.
 * - `log_nodes`: the hash of every complete subtree, keyed (level, idx): tiles, proofs and roots
 *   are read by key, never computed by a scan.
 * - `log_checkpoints`: one signed note per integration, the latest by its primary key.
 * - `tasks.receipt_log_index`: where a task's receipt sits, for the public task.
 * - `audit_log.hash` and `chain_index`: the audit log as a hash chain (below).
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
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('root', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('tasks').addColumn('receipt_log_index', 'integer').execute();
  await chainAudit(db);
}

/**
 * The audit log becomes a hash chain: `chain_index` (unique) orders it, `hash` links each entry to
 * the one before. Entries recorded from now on wait (hash NULL, partial index) for the sequencer,
 * which chains them in the transaction of a checkpoint; those recorded before are chained here,
 * oldest first.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function chainAudit(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_log').addColumn('hash', 'text').execute();
  await db.schema.alterTable('audit_log').addColumn('chain_index', 'integer').execute();
  await db.schema.createIndex('audit_log_chain_idx').on('audit_log').column('chain_index').unique().execute();
  await db.schema.createIndex('audit_log_waiting_idx').on('audit_log').columns(['at', 'id']).where(sql.ref('hash'), 'is', null).execute();
  let previous = AUDIT_CHAIN_START;
  let index = 0;
  let after: { at: string; id: string } | undefined;
  for (;;) {
    let query = db.selectFrom('audit_log').select(['id', 'at', 'actor', 'action', 'task_id', 'details']);
    if (after) {
      const a = after;
      query = query.where((eb) => eb.or([eb('at', '>', a.at), eb.and([eb('at', '=', a.at), eb('id', '>', a.id)])]));
    }
    const rows = (await query.orderBy('at').orderBy('id').limit(1000).execute()) as AuditRowBefore[];
    if (rows.length === 0) return;
    for (const row of rows) {
      previous = auditEntryHash(previous, { ...row, details: JSON.parse(row.details) as Record<string, unknown> });
      await db.updateTable('audit_log').set({ hash: previous, chain_index: index }).where('id', '=', row.id).execute();
      index += 1;
    }
    const last = rows[rows.length - 1] as AuditRowBefore;
    after = { at: last.at, id: last.id };
  }
}

interface AuditRowBefore {
  id: string;
  at: string;
  actor: string;
  action: string;
  task_id: string | null;
  details: string;
}
