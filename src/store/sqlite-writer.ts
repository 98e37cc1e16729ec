import { Worker } from 'node:worker_threads';
import { type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, SelectQueryNode, type SqliteDatabase, SqliteDialect } from 'kysely';
import type { Checkpointer } from './checkpointer.js';
import { SQLITE_DRIVER_PATH } from './sqlite-driver.js';

/**
 * SQLite's writes on a thread of their own. better-sqlite3 is synchronous: on the service's one
 * connection every INSERT, UPDATE and COMMIT ran on the event loop, and under a flood of
 * submissions the batches' statements and commits were about a third of the loop's time
 * (docs/performance.md), during which no request was parsed and no status read answered.
 *
 * Here a second connection, in a worker thread, runs every write and every transaction; the
 * event loop hands each statement over and goes on while it runs. Reads outside a transaction
 * (status reads, pages, the console) still run at once on the event loop's own connection: WAL
 * lets them read the last committed state while the thread writes, exactly as a read on
 * PostgreSQL does while another connection writes. Inside a transaction, reads before its first
 * write run there too; from its first write on, every statement goes to the thread, so the
 * transaction reads its own writes. BEGIN goes with the first write.
 *
 * The service still has one writer: transactions and lone writes take their turn (Turns), so
 * SQLite never sees two writers of this process at once and none waits in its busy handler
 * (which would block the thread, not the loop, but still be a wait). A transaction that never
 * reads how many rows a write changed may send its writes without waiting for each
 * (pipelineWrites): it then waits for the thread once, at its COMMIT.
 */

// The thread's code: CommonJS run with `eval` (as checkpointer.ts), so it needs no file of its own
// beside the bundle or the sources, and loads the very driver the service chose. Each message is
// one statement; each answer carries its id, and the rows it read or what it changed, or the
// error with SQLite's code (faults.ts names store faults by it).
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
for (const pragma of workerData.pragmas) db.pragma(pragma);
const cache = new Map();
const prepare = (text) => {
  let statement = cache.get(text);
  if (statement === undefined) {
    statement = db.prepare(text);
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value);
    cache.set(text, statement);
  }
  return statement;
};
// After a statement of a transaction fails, the rest of it is refused with the same error until
// its ROLLBACK: the event loop sends a transaction's writes without waiting for each (pipelined),
// and none of them may run after one failed (SQLite may even have rolled the transaction back
// already, on SQLITE_FULL, and the next write would commit on its own).
let failed;
const fail = (id, error) => parentPort.postMessage({ id, error: { message: String(error && error.message), code: error && error.code, name: error && error.name } });
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  const { id, sql, parameters, transaction } = message;
  if (sql === 'begin') failed = undefined;
  if (transaction && failed !== undefined && sql !== 'rollback') return fail(id, failed);
  try {
    if (sql === 'rollback') {
      failed = undefined;
      // SQLite rolls a transaction back by itself on SQLITE_FULL or SQLITE_IOERR: Kysely's ROLLBACK
      // then finds nothing open, and must not replace the real error with "no transaction is active".
      if (!db.inTransaction) return parentPort.postMessage({ id, changes: 0, lastInsertRowid: 0 });
    }
    const statement = prepare(sql);
    if (statement.reader) return parentPort.postMessage({ id, rows: statement.all(parameters) });
    const { changes, lastInsertRowid } = statement.run(parameters);
    parentPort.postMessage({ id, changes, lastInsertRowid });
  } catch (error) {
    if (transaction) failed = error;
    fail(id, error);
  }
});
`;

type Answer = { id: number } & (
  | { rows: Record<string, unknown>[] }
  | { changes: number; lastInsertRowid: number | bigint }
  | { error: { message: string; code?: string; name?: string } }
);

interface Pending {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
}

/** The message store faults name a lost connection by (faults.ts): the thread is gone. */
const THREAD_LOST = 'The database connection is not open (the SQLite writer thread stopped)';

/** The thread and its connection; started again at the next statement if it ever stops. */
class WriterThread {
  private worker: Worker | undefined;
  /** How many threads have been started: the number of the one running. */
  private started = 0;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly pragmas: readonly string[],
    private readonly cacheSize: number,
  ) {}

  /** The running thread's number, starting one if none runs: a transaction is bound to it. */
  current(): number {
    if (!this.worker && !this.closed) this.start();
    return this.started;
  }

  /** Whether thread `number` is still the one running (a transaction's connection is alive). */
  alive(number: number): boolean {
    return this.worker !== undefined && number === this.started;
  }

  /**
   * Runs a statement: alone (`thread` undefined), or as part of the transaction bound to thread
   * `thread`, which fails as a lost connection once that thread has stopped: its transaction
   * died with it, and the rest must not run on a new connection, outside any transaction.
   */
  run(sql: string, parameters: readonly unknown[], thread?: number): Promise<Answer> {
    if (this.closed || (thread !== undefined && !this.alive(thread))) return Promise.reject(new Error(THREAD_LOST));
    const transaction = thread !== undefined;
    const worker = this.worker ?? this.start();
    // Statements in flight keep the process alive; an idle thread does not.
    if (this.pending.size === 0) worker.ref();
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, sql, parameters, transaction });
    });
  }

  private start(): Worker {
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: { driver: SQLITE_DRIVER_PATH, file: this.file, pragmas: this.pragmas, cacheSize: this.cacheSize },
    });
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      waiting.resolve(answer);
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(new Error(`${THREAD_LOST}: ${reason}`));
      this.pending.clear();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit ${code}`));
    this.worker = worker;
    this.started += 1;
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    await exited;
  }
}

/** Waits in turn: one transaction or lone write of this process at a time. */
class Turns {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with the function that ends this turn, once every earlier turn has ended. */
  take(): Promise<() => void> {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const ready = this.tail.then(() => end);
    this.tail = ended;
    return ready;
  }
}

export interface ThreadedSqliteOptions {
  /** The database file (never `:memory:`: a second connection could not see it). */
  file: string;
  /** The event loop's connection, with its statement cache (db.ts): reads outside transactions. */
  reader: SqliteDatabase;
  /** Run on the thread's connection when it opens. */
  pragmas: readonly string[];
  /** Prepared statements the thread keeps, as the event loop's connection does. */
  statementCacheSize: number;
  checkpointer: Checkpointer | undefined;
  /** Bumped when a write that changed tasks has committed (Store.taskChanges). */
  taskChanges: { count: number };
  /** Told when a transaction ends, committed or not (Store.transactionEnd). */
  transactionEnd: Set<(committed: boolean) => void>;
}

/** SQLite's dialect with the writes on the thread (above); everything else is Kysely's own. */
export class ThreadedSqliteDialect extends SqliteDialect {
  readonly driver: ThreadedSqliteDriver;

  constructor(options: ThreadedSqliteOptions) {
    super({ database: options.reader });
    this.driver = new ThreadedSqliteDriver(options);
  }

  override createDriver(): Driver {
    return this.driver;
  }
}

const CHANGES_TASKS = /^\s*(update\s+"tasks"|delete\s+from\s+"tasks")/i;
const SELECT = /^\s*select\b/i;
const RETURNING = /\breturning\b/i;

/** Whether a statement changes existing tasks (UPDATE or DELETE on `tasks`): Store.taskChanges counts them. */
export function changesTasks(sqlText: string): boolean {
  return CHANGES_TASKS.test(sqlText);
}

/** Whether a statement only reads (Kysely's SELECT, or raw SQL that is one). */
function isRead(query: CompiledQuery): boolean {
  return SelectQueryNode.is(query.query) || SELECT.test(query.sql);
}

class ThreadedSqliteDriver implements Driver {
  private readonly writer: WriterThread;
  private readonly turns = new Turns();
  /** The connection holding the open transaction: one at a time (turns). */
  private current: RoutedConnection | undefined;

  constructor(private readonly options: ThreadedSqliteOptions) {
    this.writer = new WriterThread(options.file, options.pragmas, options.statementCacheSize);
  }

  /** Whether a transaction is open on the thread's connection (Store.transactionOpen). */
  get transactionOpen(): boolean {
    return this.current !== undefined;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  /** Takes this process's turn to write; BEGIN goes to the thread with the transaction's first write. */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    routed.turnEnd = await this.turn();
    routed.begun = false;
    this.current = routed;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    // A failed COMMIT is followed by Kysely's ROLLBACK, which ends the turn.
    if (routed.begun) await this.write('commit', [], routed.thread);
    this.endTransaction(routed, true);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    try {
      // A transaction whose thread has stopped was rolled back with its connection.
      if (routed.begun && this.writer.alive(routed.thread)) await this.write('rollback', [], routed.thread);
    } finally {
      this.endTransaction(routed, false);
    }
  }

  /**
   * The open transaction's writes that return no rows are sent without waiting for each: the
   * caller promises never to look at what they report (the rows they changed), and learns of a
   * failure at its next statement that returns rows, or at its COMMIT.
   */
  pipelineWrites(): void {
    if (this.current) this.current.pipelined = true;
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.writer.close();
    this.options.reader.close();
  }

  /** Runs a statement outside any transaction: a read at once here, a write in its turn there. */
  async alone(query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (isRead(query)) return this.read(query);
    const end = await this.turn();
    try {
      const result = await this.write(query.sql, query.parameters);
      if (changesTasks(query.sql)) this.options.taskChanges.count += 1;
      return result;
    } finally {
      end();
    }
  }

  /**
   * Runs a statement of the transaction `connection` holds. Until the transaction has written,
   * its reads run here, on the event loop's connection: no other writer of this process can
   * commit while it holds the turn, so they see what they would see there.
   */
  async inTransaction(connection: RoutedConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const read = isRead(query);
    if (read && !connection.begun) return this.read(query);
    if (changesTasks(query.sql)) connection.changedTasks = true;
    if (!connection.begun) {
      connection.begun = true;
      connection.thread = this.writer.current();
      this.pipelined('begin', [], connection.thread);
    }
    if (connection.pipelined && !read && !RETURNING.test(query.sql)) {
      this.pipelined(query.sql, query.parameters, connection.thread);
      return { rows: [] };
    }
    return this.write(query.sql, query.parameters, connection.thread);
  }

  /** Sends a statement of the open transaction without waiting: its failure refuses the rest (SOURCE). */
  private pipelined(sqlText: string, parameters: readonly unknown[], thread: number): void {
    this.writer.run(sqlText, parameters, thread).catch(() => undefined);
  }

  private read(query: CompiledQuery): QueryResult<unknown> {
    return { rows: this.options.reader.prepare(query.sql).all(query.parameters) };
  }

  /** Runs a statement on the thread and waits for it: alone, or in the transaction bound to `thread`. */
  private async write(sqlText: string, parameters: readonly unknown[], thread?: number): Promise<QueryResult<unknown>> {
    const answer = await this.writer.run(sqlText, parameters, thread);
    if ('error' in answer) throw Object.assign(new Error(answer.error.message), { code: answer.error.code, name: answer.error.name ?? 'SqliteError' });
    if ('rows' in answer) return { rows: answer.rows.map(withBuffers) };
    return { numAffectedRows: BigInt(answer.changes), insertId: BigInt(answer.lastInsertRowid), rows: [] };
  }

  /**
   * This process's turn to write. When the WAL has grown past its restart threshold, the
   * checkpoint thread first copies all of it back while no write is open, so the next write
   * starts it over (checkpointer.ts; the WAL no longer grows under a steady stream of writes).
   */
  private async turn(): Promise<() => void> {
    const end = await this.turns.take();
    const { checkpointer } = this.options;
    if (checkpointer?.needsDrain()) await checkpointer.drain();
    return end;
  }

  private endTransaction(connection: RoutedConnection, committed: boolean): void {
    this.current = undefined;
    connection.pipelined = false;
    if (committed && connection.changedTasks) this.options.taskChanges.count += 1;
    connection.changedTasks = false;
    const end = connection.turnEnd;
    connection.turnEnd = undefined;
    end?.();
    for (const listener of this.options.transactionEnd) listener(committed);
  }
}

/** A connection as Kysely sees it: its statements go where the driver routes them. */
class RoutedConnection implements DatabaseConnection {
  /** Set while this connection holds a transaction: ends its turn. */
  turnEnd: (() => void) | undefined;
  /** Whether the transaction's BEGIN has gone to the thread (with its first write). */
  begun = false;
  /** The thread the transaction's BEGIN went to (WriterThread.current). */
  thread = 0;
  /** Whether the transaction's writes are sent without waiting (pipelineWrites). */
  pipelined = false;
  changedTasks = false;

  constructor(private readonly driver: ThreadedSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = this.turnEnd ? this.driver.inTransaction(this, query) : this.driver.alone(query);
    return result as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { rows } = await this.executeQuery<R>(query);
    for (const row of rows) yield { rows: [row] };
  }
}

/** A BLOB crosses the thread as a Uint8Array; the service reads Buffers, as the driver gives them. */
function withBuffers(row: Record<string, unknown>): Record<string, unknown> {
  for (const key in row) {
    const value = row[key];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return row;
}
