import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type SqliteDialectConfig, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

export type Db = Kysely<Database> | Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** The raw SQLite handle, for the few hot reads that cannot afford Kysely's per-query cost. */
  sqlite?: SQLite.Database;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Counts and sums come back from pg as strings for int8; make them numbers everywhere.
pg.types.setTypeParser(20, (value) => Number(value));

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
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
    return {
      db,
      dialect: 'sqlite',
      sqlite: database,
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

/**
 * Kysely prepares every query anew, and preparing costs more than running a primary-key lookup.
 * Statements are reused by SQL text (bounded); better-sqlite3 runs them synchronously, so a
 * cached statement is never used by two queries at once.
 */
function withStatementCache(database: SQLite.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare: (sqlText: string) => {
      let statement = cache.get(sqlText);
      if (!statement) {
        statement = database.prepare(sqlText);
        if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, statement);
      }
      return statement;
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
