import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type SqliteDialectConfig, type SqliteStatement, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

export type Db = Kysely<Database> | Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** SQLite only: the raw handle, for the status read that cannot afford Kysely's per-query cost. */
  sqlite?: SQLite.Database;
  /**
   * SQLite only: bumped whenever a statement that changes existing tasks (UPDATE or DELETE on
   * `tasks`) is about to run. Every write goes through this process's one connection, so a cached
   * task is current exactly while this number has not moved.
   */
  taskChanges?: { count: number };
  /**
   * SQLite only: told when a transaction on the one connection ends, after its COMMIT ran
   * (`true`) or its ROLLBACK (`false`); the change feed holds a transaction's changes until then.
   */
  transactionEnd?: Set<(committed: boolean) => void>;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Counts and sums come back from pg as strings for int8; make them numbers everywhere.
pg.types.setTypeParser(20, (value) => Number(value));

/**
 * Runs `fn` in one transaction, or inside the caller's when `db` already is one. Use cases open
 * their transactions through this; repositories take the transaction as their `db` argument.
 */
export function withTransaction<T>(db: Db, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Transaction<Database>);
  return (db as Kysely<Database>).transaction().execute(fn);
}

/**
 * PostgreSQL: takes a transaction-scoped advisory lock per key, in the order given, so a twin
 * transaction on any instance waits here until this one ends. SQLite runs one write transaction at
 * a time, so it needs none.
 */
export async function lockKeys(db: Db, dialect: DialectName, keys: string[]): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const key of keys) await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
}

export function openStore(databaseUrl: string, options: { poolSize?: number } = {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const database = new SQLite(file);
    // WAL with synchronous=FULL: every acknowledged commit survives a power cut.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma('busy_timeout = 5000');
    database.pragma('foreign_keys = ON');
    const taskChanges = { count: 0 };
    const transactionEnd = new Set<(committed: boolean) => void>();
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database, taskChanges, transactionEnd) }) });
    return {
      db,
      dialect: 'sqlite',
      sqlite: database,
      taskChanges,
      transactionEnd,
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10, connectionTimeoutMillis: 5000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

const CHANGES_TASKS = /^\s*(update\s+"tasks"|delete\s+from\s+"tasks")/i;

/**
 * Kysely prepares every query anew, and preparing costs more than running a primary-key lookup.
 * Statements are reused by SQL text (bounded); better-sqlite3 runs them synchronously, so a
 * cached statement is never used by two queries at once. Kysely prepares right before every run,
 * which is where statements that change tasks are counted (see Store.taskChanges).
 */
function withStatementCache(
  database: SQLite.Database,
  taskChanges: { count: number },
  transactionEnd: Set<(committed: boolean) => void>,
): SqliteDialectConfig['database'] {
  const cache = new Map<string, { statement: SQLite.Statement; changesTasks: boolean }>();
  const endings = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare: (sqlText: string) => {
      // Kysely ends every transaction with exactly these statements: report the end once it ran.
      if (sqlText === 'commit' || sqlText === 'rollback') {
        let ending = endings.get(sqlText);
        if (!ending) {
          ending = endingStatement(database.prepare(sqlText), sqlText === 'commit', transactionEnd);
          endings.set(sqlText, ending);
        }
        return ending;
      }
      let entry = cache.get(sqlText);
      if (!entry) {
        entry = { statement: database.prepare(sqlText), changesTasks: CHANGES_TASKS.test(sqlText) };
        if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, entry);
      }
      if (entry.changesTasks) taskChanges.count += 1;
      return entry.statement;
    },
  };
}

function endingStatement(
  statement: SQLite.Statement,
  committed: boolean,
  transactionEnd: Set<(committed: boolean) => void>,
): SqliteStatement {
  return {
    reader: false,
    all: (parameters) => statement.all(...parameters),
    iterate: (parameters) => statement.iterate(...parameters),
    run: (parameters) => {
      const result = statement.run(...parameters);
      for (const listener of transactionEnd) listener(committed);
      return result;
    },
  };
}

export async function migrate(store: Store): Promise<void> {
  const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
