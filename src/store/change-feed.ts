import { sql } from 'kysely';
import type { Client } from 'pg';
import type { Logger } from 'pino';
import type { Db, Store } from './db.js';
import { loadPg } from './pg.js';

/**
 * What changed, told to every instance: long-polls wake on it, the live console and read caches
 * listen to it. Small on purpose: listeners read the current state from the store themselves.
 */
export type Change =
  | { kind: 'task'; taskId: string } // any change of a task, incl. creation and seen_by_operator_at
  | { kind: 'message'; messageId: string; taskId: string | null };

export interface ChangeFeed {
  /** Inside a transaction on PostgreSQL: NOTIFY, delivered on commit. On SQLite: emitted after the transaction commits (never for a rolled-back one). */
  publish(change: Change, trx?: Db): Promise<void>;
  /** Several changes of one transaction at once (PostgreSQL: one statement). */
  publishAll(changes: Change[], trx?: Db): Promise<void>;
  subscribe(listener: (change: Change) => void): () => void;
  /**
   * Told at once, in this process, when a change is published (before its transaction commits):
   * the read cache stops keeping the task until the change comes back through subscribe().
   */
  onPublish(listener: (change: Change) => void): () => void;
  /** false while the PostgreSQL LISTEN connection is down (consumers drop caches, re-check on reconnect). */
  readonly connected: boolean;
  /** Called after every (re)connection of the LISTEN connection, the first included: changes may have been missed. */
  onReconnect(listener: () => void): () => void;
  close(): Promise<void>;
}

/** The PostgreSQL channel every instance listens on. */
export const CHANGE_CHANNEL = 'human_task_changes';

export interface ChangeFeedOptions {
  store: Store;
  /** The PostgreSQL connection string (the LISTEN connection is opened apart from the pool). */
  databaseUrl: string;
  log: Logger;
}

export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  return options.store.dialect === 'postgres' ? new PostgresChangeFeed(options) : new SqliteChangeFeed(options.store, options.log);
}

/** Calls every listener; one that throws must not stop the others nor the code that published. */
function emit(listeners: Iterable<(change: Change) => void>, change: Change, log: Logger): void {
  for (const listener of listeners) {
    try {
      listener(change);
    } catch (error) {
      log.error({ err: error }, 'change feed: a listener failed');
    }
  }
}

/**
 * SQLite: this process holds the only connection, so every change is made here and an in-process
 * emitter reaches every listener. Changes published inside a transaction wait for its COMMIT
 * (Store.transactionEnd); SQLite runs one transaction at a time, so the pending list belongs to it.
 */
class SqliteChangeFeed implements ChangeFeed {
  readonly connected = true;
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly publishListeners = new Set<(change: Change) => void>();
  private pending: Change[] = [];
  private readonly onTransactionEnd = (committed: boolean) => {
    if (this.pending.length === 0) return;
    const done = this.pending;
    this.pending = [];
    if (committed) for (const change of done) emit(this.listeners, change, this.log);
  };

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    store.transactionEnd?.add(this.onTransactionEnd);
  }

  async publish(change: Change, trx?: Db): Promise<void> {
    emit(this.publishListeners, change, this.log);
    if (trx?.isTransaction && this.store.sqlite?.inTransaction) this.pending.push(change);
    else emit(this.listeners, change, this.log);
  }

  async publishAll(changes: Change[], trx?: Db): Promise<void> {
    for (const change of changes) await this.publish(change, trx);
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  onPublish(listener: (change: Change) => void): () => void {
    this.publishListeners.add(listener);
    return () => void this.publishListeners.delete(listener);
  }

  onReconnect(): () => void {
    // The in-process emitter never disconnects.
    return () => undefined;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.publishListeners.clear();
    this.store.transactionEnd?.delete(this.onTransactionEnd);
  }
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
/** A connection that died without a word (half-open TCP) is noticed by a ping this often. */
const PING_INTERVAL_MS = 30_000;
const PING_TIMEOUT_MS = 10_000;

/**
 * PostgreSQL: one dedicated LISTEN connection per instance, opened at the first subscription.
 * NOTIFY is sent in the publishing transaction, so PostgreSQL delivers it to every instance (this
 * one included) only on commit. A lost connection is reopened with backoff and jitter; meanwhile
 * `connected` is false and, once back, onReconnect listeners re-check what they wait for.
 */
class PostgresChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private readonly publishListeners = new Set<(change: Change) => void>();
  private client: Client | undefined;
  private started = false;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private ping: NodeJS.Timeout | undefined;
  private isConnected = false;

  constructor(private readonly options: ChangeFeedOptions) {}

  get connected(): boolean {
    return this.isConnected;
  }

  async publish(change: Change, trx?: Db): Promise<void> {
    await this.publishAll([change], trx);
  }

  async publishAll(changes: Change[], trx?: Db): Promise<void> {
    if (changes.length === 0) return;
    for (const change of changes) emit(this.publishListeners, change, this.options.log);
    const payloads = changes.map((change) =>
      JSON.stringify(change.kind === 'task' ? { k: 't', t: change.taskId } : { k: 'm', m: change.messageId, t: change.taskId }),
    );
    const db = trx ?? this.options.store.db;
    if (payloads.length === 1) await sql`select pg_notify(${CHANGE_CHANNEL}, ${payloads[0]})`.execute(db);
    else await sql`select pg_notify(${CHANGE_CHANNEL}, p) from unnest(${payloads}::text[]) as p`.execute(db);
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    if (!this.started) {
      this.started = true;
      void this.connect();
    }
    return () => void this.listeners.delete(listener);
  }

  onPublish(listener: (change: Change) => void): () => void {
    this.publishListeners.add(listener);
    return () => void this.publishListeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => void this.reconnectListeners.delete(listener);
  }

  private async connect(): Promise<void> {
    this.retry = undefined;
    if (this.closed) return;
    let pg: Awaited<ReturnType<typeof loadPg>>;
    try {
      pg = await loadPg();
    } catch (error) {
      this.options.log.error({ err: error }, 'change feed: could not load the PostgreSQL driver');
      this.retry = setTimeout(() => void this.connect(), RECONNECT_MAX_MS);
      this.retry.unref();
      return;
    }
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      query_timeout: PING_TIMEOUT_MS,
    });
    this.client = client;
    // Errors arrive as events on an idle client: handled here, never thrown at the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== CHANGE_CHANNEL || message.payload === undefined) return;
      const change = parseChange(message.payload);
      if (change) emit(this.listeners, change, this.options.log);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) return;
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.failures > 0) this.options.log.info('change feed: LISTEN connection restored');
    this.failures = 0;
    this.isConnected = true;
    this.ping = setInterval(() => {
      client.query('select 1').catch((error: unknown) => this.lost(client, error));
    }, PING_INTERVAL_MS);
    this.ping.unref();
    for (const listener of this.reconnectListeners) {
      try {
        listener();
      } catch (error) {
        this.options.log.error({ err: error }, 'change feed: a reconnect listener failed');
      }
    }
  }

  /** The connection broke (or could not be opened): drop it and try again after a backoff. */
  private lost(client: Client, error?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.isConnected = false;
    clearInterval(this.ping);
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.failures += 1;
    const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (this.failures - 1));
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    if (this.failures === 1 || this.failures % 10 === 0) {
      this.options.log.warn({ err: error, retry_ms: Math.round(delay) }, 'change feed: LISTEN connection lost, reconnecting');
    }
    this.retry = setTimeout(() => void this.connect(), delay);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.isConnected = false;
    if (this.retry) clearTimeout(this.retry);
    clearInterval(this.ping);
    const client = this.client;
    this.client = undefined;
    this.listeners.clear();
    this.reconnectListeners.clear();
    this.publishListeners.clear();
    if (client) {
      client.removeAllListeners('notification');
      // Keep an error handler: a late socket error after end() must not become an uncaught one.
      await client.end().catch(() => undefined);
    }
  }
}

function parseChange(payload: string): Change | undefined {
  try {
    const value = JSON.parse(payload) as { k?: unknown; t?: unknown; m?: unknown };
    if (value.k === 't' && typeof value.t === 'string') return { kind: 'task', taskId: value.t };
    if (value.k === 'm' && typeof value.m === 'string') return { kind: 'message', messageId: value.m, taskId: typeof value.t === 'string' ? value.t : null };
  } catch {
    // Not ours (someone else NOTIFYing on the channel): ignore.
  }
  return undefined;
}
