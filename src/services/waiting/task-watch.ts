import { AppError } from '../../domain/errors.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal } from '../../domain/tasks/task.js';
import type { ServiceDeps } from '../context.js';
import { getTask } from '../tasks/tasks.js';
import type { Closable } from './task-waits.js';

/**
 * Waiting for a task to change: one function, `waitForChange`, for every door that holds a read
 * (the REST long-poll, MCP check_task_status with wait_seconds, MCP tasks/get and tasks/result).
 * Each door says only what "unchanged" means to it: the ETag it holds, the updated_at it saw, or
 * "not final yet".
 */

type Task = Readonly<PublicTask>;
type WaitDeps = Pick<ServiceDeps, 'waits'> & Parameters<typeof getTask>[0];

/** The longest check_task_status hold: below the ~60 s at which MCP clients cut tool calls. */
export const MAX_TOOL_WAIT_SECONDS = 50;

export interface ChangeWait {
  /** How long to hold at most; 0 reads the task and answers at once. */
  timeoutMs: number;
  /** True while the task is still as the caller knows it (`first`: the task as this call first read it). */
  unchanged: (task: Task, first: Task) => boolean;
  /** Ends the hold early (the caller went away). */
  signal?: AbortSignal | undefined;
  /** Ends the hold early when it emits 'close' (a held HTTP response: one listener, no AbortController). */
  closes?: Closable | undefined;
  /**
   * Given, the hold first asks whether held reads have room (task-waits.ts, HELD_SHARE): when they
   * have none this is called and the task is answered as it is. Without it, the hold is attempted.
   */
  whenFull?: () => void;
  /** Called just before the hold starts (the REST door says Preference-Applied); may throw to refuse it. */
  beforeHold?: () => void;
}

/**
 * The task once it is no longer `unchanged`, or as it is when `timeoutMs` pass or the caller goes
 * away. The change feed's mark is taken before the read, so a change between the read and the
 * hold is never missed. A task deleted while held (retention) is answered as any unknown id.
 */
export async function waitForChange(deps: WaitDeps, taskId: string, options: ChangeWait): Promise<Task> {
  const since = options.timeoutMs > 0 ? deps.waits.mark() : 0;
  const first = await getTask(deps, taskId);
  if (options.timeoutMs <= 0 || !options.unchanged(first, first)) return first;
  if (options.whenFull && !deps.waits.canHold()) {
    options.whenFull();
    return first;
  }
  options.beforeHold?.();
  const result = await deps.waits.wait({
    taskId,
    current: first,
    since,
    stillCurrent: (latest) => options.unchanged(latest, first),
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    closes: options.closes,
  });
  return result.task ?? getTask(deps, taskId);
}

/**
 * The task once its updated_at differs from `knownUpdatedAt` (default: its current one), it is
 * final, or `waitSeconds` pass: whichever comes first. A final task is answered at once.
 */
export async function awaitTaskUpdate(
  deps: WaitDeps,
  taskId: string,
  options: { waitSeconds: number; knownUpdatedAt?: string | undefined; signal?: AbortSignal | undefined },
): Promise<Task> {
  return waitForChange(deps, taskId, {
    timeoutMs: Math.min(Math.max(options.waitSeconds, 0), MAX_TOOL_WAIT_SECONDS) * 1000,
    unchanged: (task, first) => !isFinal(task.status) && task.updated_at === (options.knownUpdatedAt ?? first.updated_at),
    signal: options.signal,
  });
}

/** How long one hold of awaitFinalTask lasts before it looks again (bounds a lost wake-up). */
const FINAL_HOLD_MS = 5 * 60_000;

/**
 * The task once it is final (delivered or rejected). Holds as long as it takes, until the signal
 * aborts; throws service_unavailable when the service shuts down meanwhile.
 */
export async function awaitFinalTask(deps: WaitDeps, taskId: string, signal?: AbortSignal): Promise<Task> {
  for (;;) {
    const task = await waitForChange(deps, taskId, {
      timeoutMs: FINAL_HOLD_MS,
      unchanged: (latest) => !isFinal(latest.status),
      signal,
      beforeHold: () => {
        if (deps.waits.closed || signal?.aborted) {
          throw new AppError('service_unavailable', 'The service is shutting down and stopped waiting for this task: ask again in a moment.');
        }
      },
    });
    if (isFinal(task.status)) return task;
  }
}

/**
 * The task once it is final, or as it is after `maxSeconds`: one bounded slice of
 * awaitFinalTask, for callers that must answer before a client's request timeout.
 */
export async function awaitFinalTaskFor(deps: WaitDeps, taskId: string, maxSeconds: number, signal?: AbortSignal): Promise<Task> {
  return waitForChange(deps, taskId, { timeoutMs: Math.max(maxSeconds, 0) * 1000, unchanged: (latest) => !isFinal(latest.status), signal });
}
