import type { Db } from '../../src/store/db.js';

/**
 * The number of rows of every table of the store (counters less the read counters, which every
 * read may add: a dry run is a read), to show that a request stored nothing.
 */
export async function rowCounts(db: Db): Promise<Record<string, number>> {
  const tables = (await db.introspection.getTables()).map((table) => table.name).sort();
  const counts: Record<string, number> = {};
  for (const table of tables) {
    // biome-ignore lint/suspicious/noExplicitAny: every table, by its name
    let query = (db as any).selectFrom(table).select((eb: any) => eb.fn.countAll().as('n'));
    if (table === 'counters') query = query.where('key', 'not like', 'reads:%');
    counts[table] = Number((await query.executeTakeFirstOrThrow()).n);
  }
  return counts;
}
