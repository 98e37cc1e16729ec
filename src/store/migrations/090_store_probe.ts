import type { Kysely } from 'kysely';

// The health record's write probe (docs/operations.md#store-faults-srcstorefaultsts-srcstoredbts): one row rewritten, so a store that answers reads but
// cannot take writes (disk full, read-only) is reported instead of looking healthy.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('store_probe')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
}
