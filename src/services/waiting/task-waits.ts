import type { Logger } from 'pino';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import type { ChangeFeed } from '../../store/change-feed.js';

/**
 * Held reads (REST long-poll, MCP check_task_status with wait_seconds, MCP tasks/result): each
 * waits for its task to change. Waiters are grouped by task id and cost one small record and one
 * timer each; nothing polls the store per waiter. When the change feed tells of a task change,
 * the task is read once and every waiter on it is asked whether what it knows is still current.
 * After a (re)connection of the feed (changes may have been missed) every waited task is re-read.
 */

type Task = Readonly<PublicTask>;

/**
 * The share of MAX_CONNECTIONS that held requests may take (docs/operations.md#capacity-for-health-and-the-operator-issue-34): past it a wait is not held
 * but answered at once with the current status, so polls can never take the connections that
 * status reads, submissions, health and the console need.
 */
export const HELD_SHARE = 0.75;

/** How many requests may be held at once on an instance allowing `maxConnections` connections. */
export function maxHeldFor(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections * HELD_SHARE));
}

/** Tasks whose last change is remembered for mark()/since; older ones re-check conservatively. */
const RECENT_MAX = 10_000;

export interface WaitOptions {
  taskId: string;
  /** The task as the caller last read it; returned when the wait ends without a change. */
  current: Task;
  /** true while what the caller knows still matches the task (its ETag, its updated_at, its status). */
  stillCurrent: (task: Task) => boolean;
  timeoutMs: number;
  /** Ends the wait early (the client went away): resolves as unchanged. */
  signal?: AbortSignal | undefined;
  /**
   * Ends the wait early, as `signal` does, when this emits 'close': a held HTTP request passes its
   * response, which costs one listener instead of an AbortController per held request (about 1 KB
   * each, which adds up over thousands of long-polls).
   */
  closes?: Closable | undefined;
  /** mark() taken before `current` was read: a change told between then and now is not missed. */
  since?: number | undefined;
}

export interface WaitResult {
  /** The task after the wait; undefined when it no longer exists. */
  task: Task | undefined;
  changed: boolean;
}

/** What `closes` needs of an emitter (an http.ServerResponse is one). */
export interface Closable {
  on(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

interface Waiter {
  options: WaitOptions;
  resolve: (result: WaitResult) => void;
  timer: NodeJS.Timeout;
  onAbort: (() => void) | undefined;
}

export interface TaskWaitsOptions {
  changes: ChangeFeed;
  /** Reads the current public task (the store's cached status read). */
  read: (taskId: string) => Promise<Task | undefined>;
  log: Logger;
  /** Requests held at most at once (maxHeldFor); a wait past it ends at once, unchanged. */
  maxHeld?: number;
}

export class TaskWaits {
  private readonly byTask = new Map<string, Set<Waiter>>();
  /** Tasks being re-read right now, and whether another change came in meanwhile. */
  private readonly checking = new Map<string, boolean>();
  private unsubscribe: (() => void) | undefined;
  private isClosed = false;
  /** Counts task changes told by the feed; `recent` keeps the count at each task's last change. */
  private sequence = 0;
  private readonly recent = new Map<string, number>();
  /** Sequence of the newest change forgotten from `recent`: older marks must re-check. */
  private forgotten = 0;

  constructor(private readonly options: TaskWaitsOptions) {}

  private held = 0;

  /** Number of requests held right now (metrics, tests). */
  get size(): number {
    return this.held;
  }

  /** Whether a wait started now would be held (false past maxHeld, or once closed). */
  canHold(): boolean {
    return !this.isClosed && this.held < (this.options.maxHeld ?? Number.POSITIVE_INFINITY);
  }

  /** true once the app closes: waits end at once. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Call before reading the task a wait will start from; pass the number as `since`. */
  mark(): number {
    this.listen();
    return this.sequence;
  }

  /** Holds until the task changes (stillCurrent turns false), the time passes, or the app closes. */
  wait(options: WaitOptions): Promise<WaitResult> {
    if (!this.canHold() || options.timeoutMs <= 0 || options.signal?.aborted) return Promise.resolve({ task: options.current, changed: false });
    this.listen();
    return new Promise((resolve) => {
      // One closure ends the wait unchanged, whether the time passed or the client went away.
      const unchanged = () => this.finish(waiter, { task: options.current, changed: false });
      const waiter: Waiter = { options, resolve, timer: setTimeout(unchanged, options.timeoutMs), onAbort: undefined };
      if (options.signal || options.closes) {
        waiter.onAbort = unchanged;
        options.signal?.addEventListener('abort', unchanged, { once: true });
        options.closes?.on('close', unchanged);
      }
      let set = this.byTask.get(options.taskId);
      if (!set) {
        set = new Set();
        this.byTask.set(options.taskId, set);
      }
      set.add(waiter);
      this.held += 1;
      const since = options.since;
      if (since !== undefined && (this.recent.get(options.taskId) ?? (since < this.forgotten ? Number.POSITIVE_INFINITY : -1)) > since) {
        void this.check(options.taskId);
      }
    });
  }

  /** Answers every held request as unchanged (graceful shutdown) and holds no new ones. */
  close(): void {
    this.isClosed = true;
    for (const set of [...this.byTask.values()]) {
      for (const waiter of [...set]) this.finish(waiter, { task: waiter.options.current, changed: false });
    }
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private listen(): void {
    if (this.unsubscribe) return;
    const offChange = this.options.changes.subscribe((change) => {
      if (change.kind !== 'task') return;
      this.sequence += 1;
      this.recent.delete(change.taskId);
      this.recent.set(change.taskId, this.sequence);
      if (this.recent.size > RECENT_MAX) {
        const [oldest, at] = this.recent.entries().next().value as [string, number];
        this.recent.delete(oldest);
        this.forgotten = at;
      }
      if (this.byTask.has(change.taskId)) void this.check(change.taskId);
    });
    const offReconnect = this.options.changes.onReconnect(() => {
      for (const taskId of this.byTask.keys()) void this.check(taskId);
    });
    this.unsubscribe = () => {
      offChange();
      offReconnect();
    };
  }

  /** Reads the task once for all its waiters; a change arriving during the read triggers one more. */
  private async check(taskId: string): Promise<void> {
    if (this.checking.has(taskId)) {
      this.checking.set(taskId, true);
      return;
    }
    this.checking.set(taskId, false);
    try {
      do {
        this.checking.set(taskId, false);
        const set = this.byTask.get(taskId);
        if (!set) break;
        let task: Task | undefined;
        try {
          task = await this.options.read(taskId);
        } catch (error) {
          // The store did not answer: the waiters keep waiting (their timers still run).
          this.options.log.warn({ err: error, task_id: taskId }, 'held read: could not re-read the task');
          break;
        }
        for (const waiter of [...set]) {
          if (task === undefined || !waiter.options.stillCurrent(task)) this.finish(waiter, { task, changed: true });
        }
      } while (this.checking.get(taskId) === true);
    } finally {
      this.checking.delete(taskId);
    }
  }

  private finish(waiter: Waiter, result: WaitResult): void {
    const set = this.byTask.get(waiter.options.taskId);
    if (!set?.delete(waiter)) return;
    this.held -= 1;
    if (set.size === 0) this.byTask.delete(waiter.options.taskId);
    clearTimeout(waiter.timer);
    if (waiter.onAbort) {
      waiter.options.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.options.closes?.off('close', waiter.onAbort);
    }
    waiter.resolve(result);
  }
}
