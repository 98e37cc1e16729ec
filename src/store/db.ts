import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import {
  type Driver,
  Kysely,
  type KyselyConfig,
  Migrator,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  type SqliteDialectConfig,
  type SqliteStatement,
  sql,
  type Transaction,
} from 'kysely';
import type { Pool, PoolClient, QueryConfig, Submittable } from 'pg';
import { StoreFaults, storeFaultReason } from './faults.js';
import { migrations } from './migrations/index.js';
import { loadPg } from './pg.js';
import type { Database } from './schema.js';
import { type Checkpointer, checkpointOnDemand } from './sqlite/checkpointer.js';
import { SQLite, type SQLiteDatabase, type SQLiteStatement } from './sqlite-driver.js';

export type Db = Kysely<Database> | Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** SQLite only: the raw handle, for the status read that cannot afford Kysely's per-query cost. */
  sqlite?: SQLiteDatabase;
  /**
   * SQLite only: bumped whenever a statement that changes existing tasks (UPDATE or DELETE on
   * `tasks`) is about to run. Every write goes through this process's one connection, so a cached
   * task is current exactly while this number has not moved.
   */
  taskChanges?: { count: number };
  /** Recent store faults (faults.ts), for the health record. */
  faults: StoreFaults;
  /**
   * SQLite only: told when a transaction on the one connection ends, after its COMMIT ran
   * (`true`) or its ROLLBACK (`false`); the change feed holds a transaction's changes until then.
   */
  transactionEnd?: Set<(committed: boolean) => void>;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  /** Throws when the store cannot take a write (disk full, read-only, lost connection). */
  probeWrite(at: string): Promise<void>;
  /**
   * Runs `work` with no statement timeout (migrations wait for each other's lock at start); every
   * other query is bounded by STORE_TIMEOUT_MS.
   */
  unbounded<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StoreOptions {
  poolSize?: number;
  /**
   * Connection, acquire and statement timeout (and SQLite's busy timeout), so a store that stops
   * answering turns into a 503 within seconds instead of a hang.
   */
  timeoutMs?: number;
  /**
   * Told of every statement run through Kysely, with its parameters (tests that EXPLAIN what
   * the pages run: test/scale.plans.happy.test.ts). Unset in production: no log hook at all.
   */
  onQuery?: (query: { sql: string; parameters: readonly unknown[] }) => void;
  /** SQLite: WAL checkpoints on a thread of their own while the store is busy (checkpointer.ts); on unless false. */
  checkpointInBackground?: boolean;
  /** SQLite: WAL frames past which the next use of the connection waits for a whole checkpoint (tests set fewer). */
  walRestartFrames?: number;
  /** SQLite: how often the write rate that starts and stops the checkpointer's thread is read, in ms (tests set less). */
  checkpointLookMs?: number;
  /** SQLite: how long under that rate before the thread stops, in ms (tests set less). */
  checkpointIdleMs?: number;
}

const DEFAULT_TIMEOUT_MS = 3000;
/** SQLite's page cache, in KiB (see openStore). */
const SQLITE_CACHE_KIB = 2048;

/**
 * Runs `fn` in one transaction, or inside the caller's when `db` already is one. Use cases open
 * their transactions through this; repositories take the transaction as their `db` argument.
 */
export async function withTransaction<T>(db: Db, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Transaction<Database>);
  const hooks: (() => void)[] = [];
  const value = await (db as Kysely<Database>).transaction().execute((trx) => {
    commitHooks.set(trx, hooks);
    return fn(trx);
  });
  for (const hook of hooks) {
    try {
      hook();
    } catch {
      // Hooks are in-memory hand-overs (afterCommit); one that throws must not report a
      // committed transaction as failed.
    }
  }
  return value;
}

/** The hooks of each transaction withTransaction opened, run once it has committed. */
const commitHooks = new WeakMap<object, (() => void)[]>();

/**
 * How to run something once what `db` writes has committed: outside a transaction each statement
 * commits as it runs, so the hook runs when called (after the write); inside one that
 * withTransaction opened, after its COMMIT (never when it rolls back). Undefined for a
 * transaction opened elsewhere, whose end this module cannot see.
 */
export function afterCommit(db: Db): ((hook: () => void) => void) | undefined {
  if (!db.isTransaction) return (hook) => hook();
  const hooks = commitHooks.get(db);
  return hooks && ((hook) => void hooks.push(hook));
}

/**
 * Runs `nudge` once what `db` writes can be seen from another connection: after the commit of a
 * transaction withTransaction opened, else now (a transaction opened elsewhere, whose end this
 * module cannot see). For waking a worker that claims what was just queued: woken before the
 * commit, its claim on another connection (PostgreSQL) could find nothing and leave the rows to
 * its next poll.
 */
export function whenCommitted(db: Db, nudge: () => void): void {
  const onCommit = afterCommit(db);
  if (onCommit) onCommit(nudge);
  else nudge();
}

/**
 * PostgreSQL: takes a transaction-scoped advisory lock per key, all in one statement, so a twin
 * transaction on any instance waits here until this one ends. The locks are taken in the order of
 * their hash, whoever asks, so two transactions locking overlapping keys cannot deadlock. SQLite
 * runs one write transaction at a time, so it needs none.
 */
export async function lockKeys(db: Db, dialect: DialectName, keys: string[]): Promise<void> {
  if (dialect !== 'postgres' || keys.length === 0) return;
  // A volatile function in the select list is evaluated after the sort (PostgreSQL 9.6 and later).
  await sql`select pg_advisory_xact_lock(h) from (select distinct hashtextextended(k, 0) as h from unnest(${[...new Set(keys)]}::text[]) as k) as l order by h`.execute(
    db,
  );
}

/**
 * Runs `fn` only if no other instance is running it: on PostgreSQL under a session advisory lock
 * taken with pg_try_advisory_lock on one connection, which `fn` then uses for all its work (and
 * which releases the lock if the process dies); undefined when another instance holds it. SQLite
 * is one process per file, so it runs `fn` on the store itself.
 */
export async function withExclusiveLock<T>(
  store: Pick<Store, 'db' | 'dialect'>,
  key: string,
  fn: (db: Kysely<Database>) => Promise<T>,
): Promise<{ value: T } | undefined> {
  if (store.dialect !== 'postgres') return { value: await fn(store.db) };
  return store.db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtextextended(${key}, 0)) as locked`.execute(conn);
    if (rows[0]?.locked !== true) return undefined;
    try {
      return { value: await fn(conn) };
    } finally {
      await sql`select pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(conn).catch(() => undefined);
    }
  });
}

export function openStore(databaseUrl: string, options: StoreOptions = {}): Store {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const faults = new StoreFaults();
  const bounds = { timeoutMs, unbounded: 0 };
  const unbounded = async <T>(work: () => Promise<T>): Promise<T> => {
    bounds.unbounded += 1;
    try {
      return await work();
    } finally {
      bounds.unbounded -= 1;
    }
  };
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const database = new SQLite(file);
    // WAL with synchronous=FULL: every acknowledged commit survives a power cut.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma(`busy_timeout = ${timeoutMs}`);
    database.pragma('foreign_keys = ON');
    // better-sqlite3 builds SQLite with a 16 MB page cache (SQLITE_DEFAULT_CACHE_SIZE=-16000), which
    // a busy instance fills within a minute of submissions and never gives back: the largest part
    // of its native memory. SQLite's own default, 2 MB, holds the upper levels of the B-trees and
    // the pages a batch of a few dozen submissions dirties (about 5 a task: the row and its five
    // indexes); any other page is one read from the operating system's file cache away. A batch
    // of 256 dirties about 1,000 pages: SQLite writes some of them to the WAL before the commit
    // (no extra fsync; 0-3 % more WAL frames, measured).
    database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
    // Checkpoints run on a thread of their own while the store is busy (checkpointer.ts); the
    // connection's automatic checkpoint stays, as a backstop while the thread runs.
    let checkpointer: Checkpointer | undefined;
    if (file !== ':memory:' && options.checkpointInBackground !== false) {
      const rowsChanged = database.prepare('select total_changes()').pluck();
      checkpointer = checkpointOnDemand({
        file,
        busyTimeoutMs: timeoutMs,
        ...(options.walRestartFrames !== undefined ? { restartFrames: options.walRestartFrames } : {}),
        ...(options.checkpointLookMs !== undefined ? { lookEveryMs: options.checkpointLookMs } : {}),
        ...(options.checkpointIdleMs !== undefined ? { idleMs: options.checkpointIdleMs } : {}),
        onFault: (reason) => faults.record(reason),
        rowsChanged: () => Number(rowsChanged.get()),
        setAutocheckpoint: (pages) => database.pragma(`wal_autocheckpoint = ${pages}`),
      });
    }
    const taskChanges = { count: 0 };
    const transactionEnd = new Set<(committed: boolean) => void>();
    const db = new Kysely<Database>({
      dialect: new DrainingSqliteDialect({ database: withStatementCache(database, taskChanges, transactionEnd) }, checkpointer),
      ...queryLog(options),
    });
    return {
      db,
      dialect: 'sqlite',
      sqlite: database,
      taskChanges,
      faults,
      transactionEnd,
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      probeWrite: (at) => probeWrite(db, at),
      unbounded,
      close: async () => {
        await checkpointer?.stop();
        await db.destroy();
      },
    };
  }
  // The pool, and pg itself, are made when Kysely first needs a connection (an instance on SQLite
  // never loads pg; see pg.ts). Kysely calls this once, and ends the pool on destroy().
  const makePool = async (): Promise<PostgresPool> => {
    const pg = await loadPg();
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: options.poolSize ?? 10,
      // Acquiring a client (connecting, or waiting for a free one) gives up after the timeout.
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
    });
    // A client losing its server emits 'error'. pg-pool listens only while a client is idle and
    // Kysely never does, so a connection cut while a client is checked out would end the process
    // (an 'error' event with no listener). Every client gets a listener for its whole life; pg-pool
    // then drops it when it is released (it is no longer queryable), and the query in flight fails
    // with the connection error, which becomes a 503.
    pool.on('connect', (client) => {
      client.on('error', (error) => faults.record(storeFaultReason(error) ?? 'connection lost'));
    });
    pool.on('error', (error) => faults.record(storeFaultReason(error) ?? 'connection lost'));
    return boundedPool(pool, bounds);
  };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: makePool }), ...queryLog(options) });
  return {
    db,
    dialect: 'postgres',
    faults,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    probeWrite: (at) => probeWrite(db, at),
    unbounded,
    close: () => db.destroy(),
  };
}

/** Kysely's log hook when a caller asked to see every statement (StoreOptions.onQuery). */
function queryLog(options: StoreOptions): Pick<KyselyConfig, 'log'> {
  const { onQuery } = options;
  if (!onQuery) return {};
  return {
    log: (event) => {
      if (event.level === 'query') onQuery({ sql: event.query.sql, parameters: event.query.parameters });
    },
  };
}

/** The health record's write probe: one row, rewritten (store_probe, migration 090). */
async function probeWrite(db: Kysely<Database>, at: string): Promise<void> {
  await db
    .insertInto('store_probe')
    .values({ id: 1, at })
    .onConflict((oc) => oc.column('id').doUpdateSet({ at }))
    .execute();
}

/**
 * pg's pool with every query bounded by a client-side read timeout (a partitioned server never
 * answers, and no server-side timeout can fire then). A client whose query failed on the
 * connection (timeout, reset) is destroyed on release rather than handed to the next request.
 */
function boundedPool(pool: Pool, bounds: { timeoutMs: number; unbounded: number }): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken: Error | undefined;
      const query = (textOrCursor: unknown, parameters?: ReadonlyArray<unknown>): unknown => {
        if (typeof textOrCursor !== 'string') return client.query(textOrCursor as Submittable);
        const config: QueryConfig & { query_timeout?: number } = { text: textOrCursor, values: parameters as unknown[] };
        if (bounds.unbounded === 0) config.query_timeout = bounds.timeoutMs;
        return corked(client, () => client.query(config)).catch((error: unknown) => {
          if (storeFaultReason(error) !== undefined) broken = error instanceof Error ? error : new Error('store fault');
          throw error;
        });
      };
      return {
        query: query as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

/**
 * pg writes each message of a query (Parse, Bind, Describe, Execute, Sync) to the socket apart:
 * five system calls per query, which on loopback cost more than the query itself. Corked while
 * the query is handed over (pg sends it synchronously when the client is idle, as it always is
 * here: Kysely runs one query at a time per connection), they leave in one.
 */
function corked<T>(client: PoolClient, send: () => T): T {
  const stream = (client as unknown as { connection?: { stream?: Pick<Socket, 'cork' | 'uncork'> } }).connection?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return send();
  stream.cork();
  try {
    return send();
  } finally {
    stream.uncork();
  }
}

/** Stands in for ROLLBACK when SQLite has already rolled the transaction back (see withStatementCache). */
function alreadyRolledBack(transactionEnd: Set<(committed: boolean) => void>): SqliteStatement {
  return {
    reader: false,
    all: () => [],
    iterate: () => [][Symbol.iterator](),
    run: () => {
      for (const listener of transactionEnd) listener(false);
      return { changes: 0, lastInsertRowid: 0 };
    },
  };
}

/**
 * SQLite's dialect, with the WAL kept from growing under a steady stream of writes. The thread's
 * checkpoints (checkpointer.ts) copy the WAL back into the database, but the WAL starts over only
 * when a write finds all of it copied back, which never happens while writes keep coming: it grew
 * to the backstop (BACKSTOP_PAGES, 64 MB), where the automatic checkpoint ran on the service's
 * connection, on the event loop, in the commit that crossed it. That checkpoint's pause grew with
 * the database (the pages it writes are spread over a larger file): status reads during a flood
 * waited up to 29 ms on a young store, 56 ms after 70,000 submissions (docs/performance.md).
 * Here, once the WAL has passed RESTART_FRAMES, the next query that takes the connection asks the
 * thread for a checkpoint and waits for it while holding the idle connection, so the checkpoint
 * copies everything and the next write starts the WAL over. Queries wait for the connection as
 * they always do; the event loop does not.
 */
class DrainingSqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly checkpointer: Checkpointer | undefined,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const checkpointer = this.checkpointer;
    if (checkpointer === undefined) return driver;
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => {
      const connection = await acquire();
      if (checkpointer.needsDrain()) await checkpointer.drain();
      return connection;
    };
    return driver;
  }
}

const CHANGES_TASKS = /^\s*(update\s+"tasks"|delete\s+from\s+"tasks")/i;

/**
 * Prepared statements kept. The service's steady set is under 100 (batch statements come in a few
 * sizes only, batches.ts); a prepared statement holds native memory (up to hundreds of KB for a
 * multi-row insert) until it is evicted and garbage-collected.
 */
const STATEMENT_CACHE_SIZE = 200;

/**
 * Kysely prepares every query anew, and preparing costs more than running a primary-key lookup.
 * Statements are reused by SQL text (bounded); better-sqlite3 runs them synchronously, so a
 * cached statement is never used by two queries at once. Kysely prepares right before every run,
 * which is where statements that change tasks are counted (see Store.taskChanges).
 */
function withStatementCache(
  database: SQLiteDatabase,
  taskChanges: { count: number },
  transactionEnd: Set<(committed: boolean) => void>,
): SqliteDialectConfig['database'] {
  const cache = new Map<string, { statement: SQLiteStatement; changesTasks: boolean }>();
  const endings = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare: (sqlText: string) => {
      // SQLite rolls a transaction back by itself on SQLITE_FULL or SQLITE_IOERR; Kysely's own
      // ROLLBACK would then fail with "cannot rollback - no transaction is active" and replace the
      // real error (a full disk would be reported as a bug). Nothing is open: nothing to roll back,
      // but the transaction did end (rolled back), which the change feed must hear.
      if (sqlText === 'rollback' && !database.inTransaction) return alreadyRolledBack(transactionEnd);
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
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, entry);
      }
      if (entry.changesTasks) taskChanges.count += 1;
      return entry.statement;
    },
  };
}

function endingStatement(statement: SQLiteStatement, committed: boolean, transactionEnd: Set<(committed: boolean) => void>): SqliteStatement {
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

/** Names of the migrations this code knows that the store has not applied (readiness). */
export async function pendingMigrations(store: Pick<Store, 'db'>): Promise<string[]> {
  const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
  const known = await migrator.getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

export async function migrate(store: Store): Promise<void> {
  const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await store.unbounded(() => migrator.migrateToLatest());
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
