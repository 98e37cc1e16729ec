import { Worker } from 'node:worker_threads';
import { SQLITE_DRIVER_PATH } from '../sqlite-driver.js';

/**
 * WAL checkpoints on a thread of their own. A checkpoint copies the pages committed to the WAL
 * back into the database file and syncs it; left to SQLite's automatic checkpoint, the commit
 * that crosses the WAL's threshold does it, on the service's one connection and so on the event
 * loop: a third of the commit time of a busy instance (measured: a batch of 32 submissions
 * committed in 5.6 ms with it, 3.7 ms without). Here a second connection in a worker thread
 * runs a PASSIVE checkpoint every `everyMs`: it never waits for the writer or blocks it, and it
 * only copies what every reader is done with, so it changes nothing a request can see.
 *
 * The service's connection keeps an automatic checkpoint at a higher threshold as a backstop: if
 * the thread falls behind or stops, the WAL still cannot grow without bound.
 *
 * The thread runs only while the store is busy (checkpointOnDemand): a Node worker costs 9–10 MB
 * of memory, which an instance writing a few rows a minute does not need. While no thread runs,
 * the connection checkpoints as SQLite does by default, every 1,000 pages, which at such rates is
 * a few milliseconds now and then.
 */

export interface Checkpointer {
  /**
   * Whether the WAL has grown past `restartFrames` since it last started over: the service's
   * connection should let the thread copy all of it back (`drain`) before its next write.
   */
  needsDrain(): boolean;
  /**
   * Asks the thread for a checkpoint now and resolves when it is done (or the thread did not
   * answer within DRAIN_TIMEOUT_MS). Called while the service's connection is idle and held, so
   * the checkpoint copies the whole WAL back and the connection's next write starts it over.
   */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** The automatic checkpoint's threshold on the service's connection, in pages (SQLite's default is 1,000). */
export const BACKSTOP_PAGES = 16_000;
/** WAL frames past which the service's connection waits for a whole checkpoint before its next write. */
export const RESTART_FRAMES = 8_000;
/** The connection's automatic checkpoint while no thread runs, in pages: SQLite's default. */
const QUIET_PAGES = 1_000;
/** Rows changed a second from which the store counts as busy and the thread starts. */
export const BUSY_ROWS_PER_SECOND = 100;
/** How long the store stays under that rate before the thread stops. */
const IDLE_MS = 60_000;
/** How often the rate is read. */
const LOOK_EVERY_MS = 1_000;
/** How long a drain waits for the thread at most: a stuck thread must not hold the store. */
const DRAIN_TIMEOUT_MS = 1_000;

// The thread's code: a few lines of CommonJS run with `eval`, so it needs no file of its own next
// to the bundle (dist/server.mjs) or the sources (tests), and loads the very driver the service chose.
// It reports the WAL's size after each checkpoint ({ frames }) and answers a drain ({ drained }).
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('wal_autocheckpoint = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let failing = false;
let reported = -1;
const run = () => {
  try {
    const { log } = checkpoint.get();
    failing = false;
    if (log !== reported) parentPort.postMessage({ frames: log });
    reported = log;
  } catch (error) {
    if (!failing) parentPort.postMessage({ error: String((error && error.code) || (error && error.message) || error) });
    failing = true;
  }
};
const timer = setInterval(run, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message === 'drain') {
    run();
    // The WAL starts over at the connection's next write: the next report says its new size.
    reported = -1;
    parentPort.postMessage({ drained: true });
    return;
  }
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  file: string;
  everyMs?: number;
  busyTimeoutMs: number;
  /** WAL frames past which `needsDrain` says so (default RESTART_FRAMES; tests set fewer). */
  restartFrames?: number;
  /** Told when checkpoints start failing (once until they work again), or the thread stops. */
  onFault?: (reason: string) => void;
}

type ThreadMessage = { frames: number } | { drained: true } | { error: string };

export function startCheckpointer(options: CheckpointerOptions): Checkpointer {
  const restartFrames = options.restartFrames ?? RESTART_FRAMES;
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: {
      driver: SQLITE_DRIVER_PATH,
      file: options.file,
      everyMs: options.everyMs ?? 100,
      busyTimeoutMs: options.busyTimeoutMs,
    },
    // It holds one statement and no data: a small heap is plenty.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1, stackSizeMb: 1 },
  });
  // The WAL's size at the thread's last report; reset by a drain, so one report asks for one drain.
  let frames = 0;
  let alive = true;
  const drains = new Set<() => void>();
  const drained = () => {
    for (const done of drains) done();
    drains.clear();
  };
  // Never keeps the process alive, and a failure of the thread is not the service's failure: the
  // backstop checkpoint on the service's connection goes on.
  worker.unref();
  worker.on('message', (message: ThreadMessage) => {
    // A report that arrives while a drain is asked for (the drain's own, or one made before it)
    // tells the WAL's size before it starts over.
    if ('frames' in message) frames = drains.size > 0 ? 0 : message.frames;
    else if ('drained' in message) drained();
    else options.onFault?.(message.error);
  });
  worker.on('error', (error) => options.onFault?.(`checkpointer stopped: ${error.message}`));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      alive = false;
      drained();
      resolve();
    }),
  );
  return {
    needsDrain: () => alive && frames >= restartFrames,
    drain() {
      frames = 0;
      if (!alive) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          drains.delete(done);
          resolve();
        }, DRAIN_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        drains.add(done);
        worker.postMessage('drain');
      });
    },
    async stop() {
      // Waited for: an unref'd thread would not keep the event loop alive until it has closed.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

export interface OnDemandOptions extends CheckpointerOptions {
  /** Rows the service's connection has changed since it opened (SQLite's `total_changes()`). */
  rowsChanged(): number;
  /** Sets the connection's automatic checkpoint threshold, in pages (QUIET_PAGES from the start). */
  setAutocheckpoint(pages: number): void;
  /** Tests set shorter times. */
  lookEveryMs?: number;
  idleMs?: number;
}

/**
 * The checkpointer's thread while the store is busy, none while it is quiet. Every LOOK_EVERY_MS it
 * reads how many rows the connection changed: from BUSY_ROWS_PER_SECOND the thread starts and the
 * connection's own checkpoint moves up to the backstop; after IDLE_MS under that rate the
 * connection checkpoints by itself again (QUIET_PAGES) and the thread stops. By then the thread has
 * copied the whole WAL back, so the connection's first checkpoint finds little to do.
 */
export function checkpointOnDemand(options: OnDemandOptions): Checkpointer {
  const lookEveryMs = options.lookEveryMs ?? LOOK_EVERY_MS;
  const idleMs = options.idleMs ?? IDLE_MS;
  let thread: Checkpointer | undefined;
  let stopping: Promise<void> = Promise.resolve();
  options.setAutocheckpoint(QUIET_PAGES);
  let seen = options.rowsChanged();
  let seenAt = performance.now();
  let busyAt = Number.NEGATIVE_INFINITY;
  const look = () => {
    let rows: number;
    try {
      rows = options.rowsChanged();
    } catch {
      return; // The connection is closing: the store's close stops this next.
    }
    const now = performance.now();
    // Over the time that really passed: a busy event loop runs the timer late.
    const perSecond = ((rows - seen) * 1000) / Math.max(1, now - seenAt);
    seen = rows;
    seenAt = now;
    if (perSecond >= BUSY_ROWS_PER_SECOND) {
      busyAt = now;
      if (thread !== undefined) return;
      try {
        thread = startCheckpointer(options);
      } catch (error) {
        // The connection goes on checkpointing by itself; the next busy second tries again.
        options.onFault?.(`checkpointer could not start: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      options.setAutocheckpoint(BACKSTOP_PAGES);
    } else if (thread !== undefined && now - busyAt >= idleMs) {
      options.setAutocheckpoint(QUIET_PAGES);
      const stopped = thread;
      thread = undefined;
      stopping = stopping.then(() => stopped.stop());
    }
  };
  const timer = setInterval(() => {
    try {
      look();
    } catch (error) {
      // A timer's exception would end the process: a setting the connection refused is a fault of
      // the store (the health record's), and the next look tries again.
      options.onFault?.(`checkpointer: ${error instanceof Error ? error.message : String(error)}`);
    }
  }, lookEveryMs);
  timer.unref();
  return {
    needsDrain: () => thread?.needsDrain() ?? false,
    drain: () => thread?.drain() ?? Promise.resolve(),
    async stop() {
      clearInterval(timer);
      const last = thread;
      thread = undefined;
      await Promise.all([stopping, last?.stop()]);
    },
  };
}
