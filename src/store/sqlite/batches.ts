import { SqliteAdapter } from 'kysely';
import type { Db } from '../db.js';

/**
 * The shapes of a batch's statements. SQLite keeps one prepared statement per SQL text (db.ts,
 * withStatementCache), and a multi-row insert or an IN list has a text of its own for every row or
 * value count: batches of 1 to 256 submissions made up to 256 statements per query, the largest
 * holding ~1.7 MB of native memory each (a 34-column insert of 256 rows binds 8,704 parameters),
 * and with the many batch sizes of a busy minute that was the service's largest native allocation
 * after SQLite's page cache. Batches are therefore cut or padded to a few fixed sizes:
 *
 * - writes (`writeChunks`): on SQLite, chunks of powers of two, at most WRITE_CHUNK_MAX rows
 *   (37 rows → 32 + 4 + 1): at most 7 texts per query, none large. A statement on SQLite is a
 *   function call, not a round trip. On PostgreSQL, nothing is cached per text and each statement
 *   is a round trip, so a batch stays one statement, cut only at the parameter limit;
 * - IN lists (`padded`): on both stores, padded to the next power of two by repeating the last
 *   value (the same rows come back): one statement, at most 11 texts per query up to 1,024 values.
 */

/** Rows per chunk of a batch write on SQLite: 64 rows of 34 columns is ~0.45 MB of statement. */
export const WRITE_CHUNK_MAX = 64;

/** Parameters one statement may bind, with room to spare (SQLite 32,766, PostgreSQL 65,535). */
const PARAMETERS_MAX = 30_000;

export function isSqlite(db: Db): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** `n` as a sum of powers of two, none over `max`, largest first: 37 → [32, 4, 1]; 150 with max 64 → [64, 64, 16, 4, 2]. */
export function powerOfTwoSizes(n: number, max: number): number[] {
  const sizes: number[] = [];
  let left = n;
  while (left >= max) {
    sizes.push(max);
    left -= max;
  }
  for (let size = max; size >= 1; size /= 2) {
    if (left >= size) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

/**
 * The rows of a batch write, cut into the chunks each statement takes (see above). `columns` is
 * the number of parameters a row binds.
 */
export function writeChunks<T>(db: Db, rows: readonly T[], columns: number): T[][] {
  const perStatement = Math.max(1, Math.floor(PARAMETERS_MAX / columns));
  const sizes = isSqlite(db)
    ? powerOfTwoSizes(rows.length, Math.min(WRITE_CHUNK_MAX, 2 ** Math.floor(Math.log2(perStatement))))
    : Array.from({ length: Math.ceil(rows.length / perStatement) }, (_, i) => Math.min(perStatement, rows.length - i * perStatement));
  const chunks: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    chunks.push(rows.slice(at, at + size));
    at += size;
  }
  return chunks;
}

/**
 * The values of an IN list, padded to the next power of two by repeating the last one (the
 * statement matches the same rows). Empty stays empty.
 */
export function padded<T>(values: readonly T[]): T[] {
  if (values.length === 0) return [];
  const last = values[values.length - 1] as T;
  const size = 2 ** Math.ceil(Math.log2(values.length));
  const result = [...values];
  while (result.length < size) result.push(last);
  return result;
}
