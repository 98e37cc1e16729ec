import type { PublicTask } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../context.js';
import type { Closable } from '../waiting/task-waits.js';
import { waitForChange } from '../waiting/task-watch.js';
import { type A2AStreamResponse, a2aState, changeEvents, isFinalState, isStopState, type MappingOptions, toA2ATask } from './mapping.js';

/**
 * Following a task over A2A (docs/a2a.md "Blocking and streams"): a blocking SendMessage holds
 * until the task is final or waits for the requester; a stream sends the task, then its status and
 * artifact updates, and ends at the same states. Both are held reads of the waiting service
 * (services/waiting), so a change on another instance wakes them through the change feed, and
 * they count among the held requests the connection caps allow.
 */

type Task = Readonly<PublicTask>;

/** How often a quiet stream sends an SSE comment, so proxies and clients keep it open. */
export const HEARTBEAT_MS = 15_000;

/** One hold of a blocking send before it looks again (bounds a lost wake-up). */
const BLOCKING_SLICE_MS = 5 * 60_000;

/**
 * The task once it is final or INPUT_REQUIRED, or as it is when the caller goes away (`closes`)
 * or held requests have no room left (then at once).
 */
export async function awaitStopState(deps: ServiceDeps, taskId: string, closes: Closable): Promise<Task> {
  const caller = presence(closes);
  try {
    for (;;) {
      let full = false;
      const task = await waitForChange(deps, taskId, {
        timeoutMs: BLOCKING_SLICE_MS,
        unchanged: (latest) => !isStopState(a2aState(latest)),
        closes,
        whenFull: () => {
          full = true;
        },
      });
      if (full || isStopState(a2aState(task)) || caller.gone || deps.waits.closed) return task;
    }
  } finally {
    caller.release();
  }
}

/** Whether the held response closed (the caller went away) since this was called. */
function presence(closes: Closable): { readonly gone: boolean; release: () => void } {
  const state = { gone: false, release: () => closes.off('close', onClose) };
  const onClose = () => {
    state.gone = true;
  };
  closes.on('close', onClose);
  return state;
}

/** What a stream writes: an event, or a heartbeat comment. */
export type StreamItem = { event: A2AStreamResponse } | { heartbeat: true };

/**
 * A task's stream: the `Task` first, then the updates of each change, a heartbeat every 15 s of
 * quiet; it ends once the task reaches a final state, or an interrupted state it reached while
 * followed (subscribing to a task that already waits for input follows it on: the answer may come
 * by another way), when the caller goes away, or when held requests have no room (after the
 * `Task`, which the client may subscribe again for).
 */
export async function* followTask(
  deps: ServiceDeps,
  first: Task,
  contextId: string,
  options: MappingOptions & { closes: Closable },
): AsyncGenerator<StreamItem> {
  const mapping = { baseUrl: options.baseUrl };
  const caller = presence(options.closes);
  try {
    yield* follow();
  } finally {
    caller.release();
  }

  async function* follow(): AsyncGenerator<StreamItem> {
    yield { event: { task: toA2ATask(first, contextId, { ...mapping, historyLength: options.historyLength }) } };
    let known = first;
    const ends = (task: Task) => isFinalState(a2aState(task)) || (task !== first && isStopState(a2aState(task)));
    while (!ends(known)) {
      if (caller.gone || deps.waits.closed) return;
      let full = false;
      const latest = await waitForChange(deps, known.task_id, {
        timeoutMs: HEARTBEAT_MS,
        // Unchanged for the subscriber while it would be told nothing (the same state, message and artifact).
        unchanged: (task) => changeEvents(known, task, contextId, mapping).length === 0,
        closes: options.closes,
        whenFull: () => {
          full = true;
        },
      });
      if (full) return;
      const events = changeEvents(known, latest, contextId, mapping);
      if (events.length === 0) yield { heartbeat: true };
      for (const event of events) yield { event };
      known = latest;
    }
  }
}
