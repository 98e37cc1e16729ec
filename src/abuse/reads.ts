import type { Logger } from 'pino';
import type { Clock } from '../domain/time.js';
import { addCounts, readCounters } from '../store/counters-repo.js';
import type { Db } from '../store/db.js';
import { counterExpiry, windowOf } from './limits.js';

/**
 * READ_LIMIT_PER_MINUTE without a database write per read. Each instance counts reads in memory and
 * flushes the increments to the shared store counter (`reads:m:<client>:<minute>`) once a second,
 * and at once when a client nears its limit, reading back the total of every instance. Within one
 * instance the limit is exact; across instances it is shared within about a second.
 */

interface Entry {
  /** Minute index (epoch ms / 60 000) the counts belong to. */
  minute: number;
  /** Total across instances as of the last flush (our flushed reads included). */
  shared: number;
  /** Reads being flushed right now. */
  flushing: number;
  /** Reads not yet flushed. */
  local: number;
}

/** What a read is told: remaining after it (−1: refused) and seconds until the window resets. */
export interface ReadVerdict {
  remaining: number;
  resetSeconds: number;
}

interface Pending {
  key: string;
  entry: Entry;
  count: number;
}

const FLUSH_INTERVAL_MS = 1000;
/** Idle clients whose shared totals one flush refreshes. */
const MAX_REFRESH = 1000;
const MAX_CLIENTS = 100_000;
/** Clients per flush statement. */
const FLUSH_CHUNK = 500;

export class ReadLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly nearLimit: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly verdict: ReadVerdict = { remaining: 0, resetSeconds: 0 };

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly limit: number,
  ) {
    this.nearLimit = Math.max(1, Math.floor(limit * 0.9));
  }

  /** Counts one read. The returned object is reused: read it before the next call. */
  take(clientHash: string): ReadVerdict {
    const now = this.clock.now().getTime();
    const minute = Math.floor(now / 60_000);
    this.verdict.resetSeconds = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    let entry = this.entries.get(clientHash);
    let fresh = false;
    if (entry === undefined || entry.minute !== minute) {
      if (entry === undefined && this.entries.size >= MAX_CLIENTS) this.prune(minute);
      entry = { minute, shared: 0, flushing: 0, local: 0 };
      this.entries.set(clientHash, entry);
      fresh = true;
    }
    const used = entry.shared + entry.flushing + entry.local;
    if (used >= this.limit) {
      this.verdict.remaining = -1;
      return this.verdict;
    }
    entry.local += 1;
    this.verdict.remaining = this.limit - used - 1;
    this.timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
    // A client new to this instance this minute, or one near its limit: learn the shared total now.
    if ((fresh || used + 1 >= this.nearLimit) && this.flushing === undefined) void this.flush();
    return this.verdict;
  }

  /**
   * Sends every unflushed count to the store in one upsert and reads back the shared totals; the
   * totals of clients idle here this minute are refreshed too, so reads elsewhere count here.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    const minute = Math.floor(this.clock.now().getTime() / 60_000);
    const batch: Pending[] = [];
    const idle: Pending[] = [];
    for (const [client, entry] of this.entries) {
      if (entry.minute < minute) {
        this.entries.delete(client);
        continue;
      }
      const key = `reads:m:${client}:${windowOf('minute', new Date(entry.minute * 60_000)).id}`;
      if (entry.local === 0) {
        if (entry.flushing === 0 && idle.length < MAX_REFRESH) idle.push({ key, entry, count: 0 });
        continue;
      }
      batch.push({ key, entry, count: entry.local });
      entry.flushing += entry.local;
      entry.local = 0;
    }
    if (batch.length === 0 && idle.length === 0) return Promise.resolve();
    this.flushing = this.write(batch, idle).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async write(batch: Pending[], idle: Pending[]): Promise<void> {
    let settled = 0;
    try {
      const expires = counterExpiry(windowOf('minute', this.clock.now()));
      // In chunks: one statement may bind only so many parameters (SQLite 32 766, PostgreSQL 65 535).
      while (settled < batch.length) {
        const chunk = batch.slice(settled, settled + FLUSH_CHUNK);
        const totals = await addCounts(
          this.db,
          chunk.map((b) => ({ key: b.key, count: b.count, expiresAt: expires })),
        );
        for (const b of chunk) {
          b.entry.flushing -= b.count;
          b.entry.shared = Math.max(b.entry.shared + b.count, totals.get(b.key) ?? 0);
        }
        settled += chunk.length;
      }
      if (idle.length > 0) {
        const totals = await readCounters(
          this.db,
          idle.map((i) => i.key),
        );
        for (const i of idle) i.entry.shared = Math.max(i.entry.shared, totals.get(i.key) ?? 0);
      }
    } catch (error) {
      // The store is unreachable: keep counting what was not written locally and try again later.
      for (const b of batch.slice(settled)) {
        b.entry.flushing -= b.count;
        b.entry.local += b.count;
      }
      this.log.warn({ err: error }, 'could not flush read counters');
    }
  }

  private prune(minute: number): void {
    for (const [client, entry] of this.entries) if (entry.minute < minute) this.entries.delete(client);
    if (this.entries.size >= MAX_CLIENTS) this.entries.clear();
  }

  /** Waits for a flush in flight, then flushes everything counted up to now. */
  async sync(): Promise<void> {
    await this.flushing;
    await this.flush();
  }

  /** Stops the timer and flushes what is left (on app close). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sync();
  }
}
