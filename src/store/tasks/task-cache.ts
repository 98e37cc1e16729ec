import type { PublicTask } from '../../domain/tasks/schemas.js';
import type { ChangeFeed } from '../change-feed.js';
import type { Store } from '../db.js';

type Task = Readonly<PublicTask>;

/** Tasks kept per instance; a few hundred kilobytes at most. */
const DEFAULT_SIZE = 1000;

interface Entry {
  task: Task;
  stamp: number;
}

export interface PublicTaskCacheOptions {
  /**
   * A number that moves whenever any task may have changed without the cache being told one by
   * one (SQLite: Store.taskChanges, counted at every UPDATE/DELETE on tasks). An entry is current
   * only while this has not moved since it was read. Constant where invalidation is per task.
   */
  stamp: () => number;
  /** false while the cache cannot know of every change (the LISTEN connection is down): bypassed and dropped. */
  usable: () => boolean;
  size?: number;
}

/**
 * The public status read's cache, one design for both stores: the same frozen task object is
 * returned until the task changes, so a repeated read or a 304 costs no query and no serialization
 * (http/conditional.ts remembers the ETag per object). It is told of changes two ways: the stamp
 * (SQLite's one connection sees every write) and invalidate() from the change feed (PostgreSQL,
 * where other instances write: LISTEN/NOTIFY reaches every instance on commit). A missed
 * notification cannot become a stale read: while the LISTEN connection is down the cache is not
 * used, and it is dropped whole when the loss is noticed and again on every reconnection.
 */
export class PublicTaskCache {
  private readonly tasks = new Map<string, Entry>();
  /** Bumped by every invalidation; a read remembers it at its start. */
  private generation = 0;
  /** Generation of the last clear(): reads started before it are not kept. */
  private clearedAt = 0;
  /** While reads are in flight: the generation at which each task was last invalidated. */
  private readonly invalidated = new Map<string, number>();
  private inFlight = 0;
  /**
   * Tasks this instance changed whose change has not come back through the feed yet (it is told
   * on commit, after this instance may already have answered the writer): not kept meanwhile, so
   * the writer's next read here sees its own change.
   */
  private readonly pending = new Set<string>();
  private readonly size: number;

  constructor(private readonly options: PublicTaskCacheOptions) {
    this.size = options.size ?? DEFAULT_SIZE;
  }

  get(id: string): Task | undefined {
    if (!this.options.usable()) {
      if (this.tasks.size > 0) this.clear();
      return undefined;
    }
    const entry = this.tasks.get(id);
    if (entry === undefined) return undefined;
    if (entry.stamp === this.options.stamp()) return entry.task;
    this.tasks.delete(id);
    return undefined;
  }

  /**
   * Reads a task from the store through `read` and keeps it (frozen: every caller shares it)
   * unless it may be older than a change told meanwhile: a notification that overtook the read,
   * a moved stamp, or a lost LISTEN connection.
   */
  async load(id: string, read: () => Promise<PublicTask | undefined> | PublicTask | undefined): Promise<Task | undefined> {
    const stamp = this.options.stamp();
    const generation = this.generation;
    this.inFlight += 1;
    let task: PublicTask | undefined;
    try {
      task = await read();
    } finally {
      this.inFlight -= 1;
    }
    const changedMeanwhile = this.clearedAt > generation || (this.invalidated.get(id) ?? -1) > generation;
    if (this.inFlight === 0) this.invalidated.clear();
    if (task === undefined) return undefined;
    for (const entry of task.status_history) Object.freeze(entry);
    Object.freeze(task.status_history);
    for (const file of task.attachments ?? []) Object.freeze(file);
    if (task.attachments) Object.freeze(task.attachments);
    Object.freeze(task);
    if (changedMeanwhile || this.pending.has(id) || !this.options.usable() || stamp !== this.options.stamp()) return task;
    if (this.tasks.size >= this.size) this.tasks.delete(this.tasks.keys().next().value as string);
    this.tasks.set(id, { task, stamp });
    return task;
  }

  /** A change of this task is being made here: drop it and keep nothing until invalidate(id). */
  changing(id: string): void {
    // Bounded: a rolled-back change never comes back; forgetting all only costs cache hits.
    if (this.pending.size >= this.size) this.pending.clear();
    this.invalidate(id);
    this.pending.add(id);
  }

  invalidate(id: string): void {
    this.generation += 1;
    this.pending.delete(id);
    this.tasks.delete(id);
    if (this.inFlight > 0) this.invalidated.set(id, this.generation);
  }

  clear(): void {
    this.generation += 1;
    this.pending.clear();
    this.clearedAt = this.generation;
    this.tasks.clear();
  }

  /** Number of tasks held (tests, metrics). */
  get count(): number {
    return this.tasks.size;
  }
}

/**
 * Builds the store's cache and wires it to the change feed: every task change told by the feed
 * drops that task, every (re)connection of the feed drops everything. Returns the cache and the
 * unsubscribe function (the feed's close() also ends it).
 */
export function createPublicTaskCache(store: Store, changes: ChangeFeed): { cache: PublicTaskCache; stop: () => void } {
  const { taskChanges } = store;
  const cache = new PublicTaskCache({
    stamp: taskChanges ? () => taskChanges.count : () => 0,
    usable: () => changes.connected,
  });
  const unsubscribe = changes.subscribe((change) => {
    // A message never changes the public task; a task change (creation included) does.
    if (change.kind === 'task') cache.invalidate(change.taskId);
  });
  const unpublish = changes.onPublish((change) => {
    if (change.kind === 'task') cache.changing(change.taskId);
  });
  const unreconnect = changes.onReconnect(() => cache.clear());
  return {
    cache,
    stop: () => {
      unsubscribe();
      unpublish();
      unreconnect();
    },
  };
}
