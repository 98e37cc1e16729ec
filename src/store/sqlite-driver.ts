import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The one place that picks the SQLite driver for the Node.js running the service (docs/node24.md).
 * Two builds of better-sqlite3 are installed side by side, and neither runs on every Node the
 * service supports:
 * - `better-sqlite3` 12 (V8 API, compiled by `npm ci` for the Node that ran it) aborts the process
 *   on Node 24 when the garbage collector finalizes a statement (WiseLibs/better-sqlite3#1515);
 * - `better-sqlite3-napi` (npm alias of better-sqlite3 13, Node-API, its prebuilt add-on ships in
 *   the package) declares Node-API 10, and a Node without it (every Node 20, Node 22 before 22.14)
 *   crashes with a segmentation fault while loading it (WiseLibs/better-sqlite3#1514).
 * So the runtime's Node-API version decides, before anything is loaded: a crash cannot be caught.
 */
export type SqliteDriverName = 'better-sqlite3' | 'better-sqlite3-napi';

/** The driver for a runtime that reports `napiVersion` (`process.versions.napi`). */
export function sqliteDriverFor(napiVersion: string | undefined): SqliteDriverName {
  return Number(napiVersion) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3';
}

export const SQLITE_DRIVER: SqliteDriverName = sqliteDriverFor(process.versions.napi);

// Both are CommonJS packages; require() loads only the chosen one (an import would load both).
const load = createRequire(import.meta.url);

/** better-sqlite3's Database constructor (with `SqliteError`), from the chosen driver. */
export const SQLite: typeof BetterSqlite3 = load(SQLITE_DRIVER);

/** Where the chosen driver is, for a thread that must load the very same one (checkpointer.ts). */
export const SQLITE_DRIVER_PATH: string = load.resolve(SQLITE_DRIVER);

/** Version 13 keeps version 12's API for everything the service uses, so 12's types describe both. */
export type SQLiteDatabase = BetterSqlite3.Database;
export type SQLiteStatement = BetterSqlite3.Statement;
