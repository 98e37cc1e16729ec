import type { Kysely } from 'kysely';
import { windowFirstDay } from '../../domain/tasks/coverage.js';
import type { Database } from '../schema.js';
import { backfillCoverage } from '../tasks/coverage-repo.js';

/**
 * Coverage (contract "Know before you ask", docs/coverage.md): the histograms of time to seen, to
 * accepted and to delivered, per UTC day and task type, and their sum over the window, kept by the
 * store functions that change a task, in the transaction of the change (tasks-repo.ts). Filled
 * here once from the tasks stored so far, a batch at a time.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('coverage_days')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('task_type', 'text', (c) => c.notNull())
    .addColumn('measure', 'text', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('coverage_days_pk', ['day', 'task_type', 'measure', 'bucket'])
    .execute();
  await db.schema
    .createTable('coverage_window')
    .addColumn('task_type', 'text', (c) => c.notNull())
    .addColumn('measure', 'text', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('buckets', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('coverage_window_pk', ['task_type', 'measure'])
    .execute();
  await backfillCoverage(db as Kysely<Database>, windowFirstDay(new Date()));
}
