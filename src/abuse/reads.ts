import type { Logger } from 'pino';
import type { Clock } from '../domain/time.js';
import { addCounts, readCounters } from '../store/abuse-control/counters-repo.js';
import type { Db } from '../store/db.js';
import { outcomeUnknown } from '../store/faults.js';
import { counterExpiry, windowOf } from './limits.js';

/**
 * READ_LIMIT_PER_MINUTE without a database write per read, and without work that grows with the
 * number of clients. A read touches its own client's entry only: one map lookup and an increment
 * (the counter key is built once per client per minute). Once a second a timer sends the
 * increments of the clients that read since the last flush — and only those — to the shared store
 * counter (`reads:m:<client>:<minute>`), in chunks, and learns from each upsert the total of every
 * instance; it also reads back the totals of up to 500 clients idle here, in turns, so a client's
 * reads on other instances count here within seconds even if it does not read here meanwhile. A
 * read that brings its client near the limit (90 %) moves that flush to the next turn of the event
 * loop, so near-limit clients learn the others' reads sooner, in one statement for all of them.
 * Within one instance the limit is exact; across instances it is shared within about a second: a
 * client learns the others' reads at the first flush after it reads here.
 */

interface Entry {
  /** `reads:m:<client>:<minute>`, built once. */
  key: string;
  /** Total across instances as of this entry's last flush (our flushed reads included). */
  shared: number;
  /** Reads being flushed right now. */
  flushing: number;
  /** Reads not yet flushed. */
  local: number;
  /** In the queue of entries the next flush sends. */
  queued: boolean;
}

/** What a read is told: remaining after it (−1: refused) and seconds until the window resets. */
export interface ReadVerdict {
  remaining: number;
  resetSeconds: number;
}

const FLUSH_INTERVAL_MS = 1000;
/** Clients remembered in one minute; past it the minute starts afresh (memory stays bounded). */
const MAX_CLIENTS = 100_000;
/** Clients per flush statement. */
const FLUSH_CHUNK = 500;
/** Idle clients whose shared totals one flush reads back (in turn: all of them every few seconds). */
const REFRESH_BATCH = 500;

export class ReadLimiter {
  /** This minute's entries; a new minute starts a new map (the old one is dropped whole). */
  private entries = new Map<string, Entry>();
  private minute = Number.NaN;
  /** The minute's window id (`2030-03-10T10:07`), part of every key of the minute. */
  private minuteId = '';
  /** Entries with reads not yet sent, in the order they first read since the last flush. */
  private queue: Entry[] = [];
  /** Where the read-back of idle clients' totals goes on: a walk of this minute's map, in turns. */
  private cursor: Iterator<Entry> | undefined;
  private readonly nearLimit: number;
  private timer: NodeJS.Timeout | undefined;
  /** The flush in flight: one at a time, so a slow store makes the next one wait, not pile up. */
  private flushing: Promise<void> | undefined;
  /** A near-limit flush is scheduled for the next turn of the event loop. */
  private soon: NodeJS.Immediate | undefined;
  /** A near-limit read came while a flush was in flight: flush again when it ends. */
  private again = false;
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
    if (minute !== this.minute) this.startMinute(minute);
    this.verdict.resetSeconds = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    let entry = this.entries.get(clientHash);
    if (entry === undefined) {
      if (this.entries.size >= MAX_CLIENTS) this.entries = new Map();
      entry = { key: `reads:m:${clientHash}:${this.minuteId}`, shared: 0, flushing: 0, local: 0, queued: false };
      this.entries.set(clientHash, entry);
    }
    const used = entry.shared + entry.flushing + entry.local;
    if (used >= this.limit) {
      this.verdict.remaining = -1;
      return this.verdict;
    }
    entry.local += 1;
    this.verdict.remaining = this.limit - used - 1;
    if (!entry.queued) {
      entry.queued = true;
      this.queue.push(entry);
    }
    this.timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
    // Near its limit, a client should learn the other instances' reads soon: flush at the next
    // turn of the event loop (off this request's path), together with every other queued entry.
    if (used + 1 >= this.nearLimit) this.flushSoon();
    return this.verdict;
  }

  private flushSoon(): void {
    if (this.flushing) {
      this.again = true;
      return;
    }
    this.soon ??= setImmediate(() => {
      this.soon = undefined;
      void this.flush();
    });
  }

  /** A new minute: new keys, a new map. Entries of the last minute still queued keep their key. */
  private startMinute(minute: number): void {
    this.minute = minute;
    this.minuteId = windowOf('minute', new Date(minute * 60_000)).id;
    this.entries = new Map();
    this.cursor = undefined;
  }

  /**
   * Sends the reads of every client that read since the last flush (the timer's work), and reads
   * back the totals of up to REFRESH_BATCH clients idle here, in turns, so reads on other instances
   * count here too. Its cost is the changed clients plus a bounded batch, whatever the crowd.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    const queued = this.queue;
    const idle = this.idleBatch();
    if (queued.length === 0 && idle.length === 0) return Promise.resolve();
    this.queue = [];
    for (const entry of queued) entry.queued = false;
    this.flushing = this.write(queued)
      .then(() => this.refresh(idle))
      .finally(() => {
        this.flushing = undefined;
        if (this.again) {
          this.again = false;
          this.flushSoon();
        }
      });
    return this.flushing;
  }

  /** The next idle entries of this minute (nothing counted and nothing in flight), at most a batch. */
  private idleBatch(): Entry[] {
    if (Math.floor(this.clock.now().getTime() / 60_000) !== this.minute) return [];
    const batch: Entry[] = [];
    let restarted = false;
    // Bounded steps, busy entries included: a flush never walks more than this, whatever the crowd.
    for (let steps = 0; batch.length < REFRESH_BATCH && steps < 2 * REFRESH_BATCH; steps++) {
      this.cursor ??= this.entries.values();
      const next = this.cursor.next();
      if (next.done) {
        this.cursor = undefined;
        // One walk of the map at most per flush.
        if (restarted) break;
        restarted = true;
        continue;
      }
      const entry = next.value;
      if (entry.local === 0 && entry.flushing === 0) batch.push(entry);
    }
    return batch;
  }

  private async refresh(idle: Entry[]): Promise<void> {
    if (idle.length === 0) return;
    try {
      const totals = await readCounters(
        this.db,
        idle.map((entry) => entry.key),
      );
      for (const entry of idle) entry.shared = Math.max(entry.shared, totals.get(entry.key) ?? 0);
    } catch (error) {
      this.log.warn({ err: error }, 'could not read back the shared read counters');
    }
  }

  /** Adds the entries' unsent reads to their shared counters and learns the totals back. */
  private async write(batch: Entry[]): Promise<void> {
    const counts = batch.map((entry) => {
      const count = entry.local;
      entry.flushing += count;
      entry.local = 0;
      return count;
    });
    let settled = 0;
    try {
      const expiresAt = counterExpiry(windowOf('minute', this.clock.now()));
      // In chunks: one statement may bind only so many parameters (SQLite 32 766, PostgreSQL 65 535).
      while (settled < batch.length) {
        const end = Math.min(batch.length, settled + FLUSH_CHUNK);
        const rows: { key: string; count: number; expiresAt: string }[] = [];
        for (let i = settled; i < end; i++) rows.push({ key: (batch[i] as Entry).key, count: counts[i] as number, expiresAt });
        const totals = await addCounts(this.db, rows);
        for (let i = settled; i < end; i++) {
          const entry = batch[i] as Entry;
          const count = counts[i] as number;
          entry.flushing -= count;
          entry.shared = Math.max(entry.shared + count, totals.get(entry.key) ?? 0);
        }
        settled = end;
      }
    } catch (error) {
      // The store is unreachable: keep counting what was not written locally and send it later.
      // Unless the failed statement may have been applied (it went out, its answer did not come
      // back): sent again it would count those reads twice, and refuse a client reads it still
      // has. Its entries are left idle, so a later flush reads their totals back instead; if it
      // was not applied, those reads go uncounted, in the client's favour.
      const unknown = outcomeUnknown(error);
      const chunkEnd = Math.min(batch.length, settled + FLUSH_CHUNK);
      for (let i = settled; i < batch.length; i++) {
        const entry = batch[i] as Entry;
        entry.flushing -= counts[i] as number;
        if (unknown && i < chunkEnd) continue;
        entry.local += counts[i] as number;
        if (!entry.queued) {
          entry.queued = true;
          this.queue.push(entry);
        }
      }
      this.log.warn({ err: error, outcomeUnknown: unknown }, 'could not flush read counters');
    }
  }

  /** Waits for the flush in flight, then flushes everything counted up to now. */
  async sync(): Promise<void> {
    await this.flushing;
    await this.flush();
  }

  /** Stops the timers and flushes what is left (on app close). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = undefined;
    this.soon = undefined;
    await this.sync();
  }
}
