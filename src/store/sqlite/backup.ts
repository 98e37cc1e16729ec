import { existsSync, rmSync } from 'node:fs';
import { SQLite, type SQLiteDatabase } from '../sqlite-driver.js';

/** The SQLite file of a `sqlite:<path>` DATABASE_URL, or undefined for PostgreSQL (and `:memory:`). */
export function sqliteFileOf(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? undefined : file;
}

/**
 * A consistent copy of a live SQLite store through SQLite's online backup API: the service keeps
 * running (writers wait only for each copied step), and the copy includes what the WAL holds.
 * Returns the number of pages copied.
 */
export async function backupSqlite(databaseFile: string, target: string): Promise<number> {
  if (!existsSync(databaseFile)) throw new Error(`no store at ${databaseFile}`);
  const source = new SQLite(databaseFile, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    const result = await source.backup(target);
    return result.totalPages;
  } finally {
    source.close();
  }
}

/** Whether a file is a SQLite database of this service (it has the migrations table and tasks). */
export function isServiceBackup(file: string): boolean {
  let db: SQLiteDatabase | undefined;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
    const tables = db.prepare(`select name from sqlite_master where type = 'table' and name in ('kysely_migration', 'tasks', 'signing_keys')`).all();
    return tables.length === 3;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

/**
 * Replaces the store file with a backup, through the backup API again (so the result is a clean,
 * WAL-free database). The old file's -wal and -shm are removed first: a stale WAL applied to the
 * restored file would corrupt it. The service must be stopped; callers refuse without --force
 * when a store already exists.
 */
export async function restoreSqlite(backupFile: string, databaseFile: string): Promise<number> {
  for (const suffix of ['-wal', '-shm']) rmSync(`${databaseFile}${suffix}`, { force: true });
  const source = new SQLite(backupFile, { readonly: true, fileMustExist: true });
  try {
    const result = await source.backup(databaseFile);
    return result.totalPages;
  } finally {
    source.close();
  }
}
