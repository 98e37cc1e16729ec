import { loadOnce } from '../domain/load-once.js';

/**
 * The PostgreSQL driver, loaded when the first PostgreSQL connection is opened: an instance on
 * SQLite never loads it. On Node 20, loading pg also loads undici (Node's fetch, reached through
 * the global Response): ~3 MB of resident memory an instance on SQLite has no use for.
 */
export const loadPg = loadOnce(async () => {
  const { default: pg } = await import('pg');
  // Counts and sums come back from pg as strings for int8; make them numbers everywhere.
  pg.types.setTypeParser(20, (value) => Number(value));
  return pg;
});
