import { AppError } from '../../domain/errors.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal } from '../../domain/tasks/task.js';
import type { ServiceDeps } from '../context.js';
import { getTask } from '../tasks/tasks.js';

/**
 * Waiting for a task, for the MCP doors (check_task_status with wait_seconds, tasks/result); the
 * REST long-poll compares ETags through the same TaskWaits (http/routes/public.ts).
 */

type Task = Readonly<PublicTask>;

/** The longest check_task_status hold: below the ~60 s at which MCP clients cut tool calls. */
export const MAX_TOOL_WAIT_SECONDS = 50;

/**
 * The task once its updated_at differs from `knownUpdatedAt` (default: its current one), it is
 * final, or `waitSeconds` pass: whichever comes first. A final task is answered at once.
 */
export async function awaitTaskUpdate(
  deps: ServiceDeps,
  taskId: string,
  options: { waitSeconds: number; knownUpdatedAt?: string | undefined; signal?: AbortSignal | undefined },
): Promise<Task> {
  const since = options.waitSeconds > 0 ? deps.waits.mark() : 0;
  const task = await getTask(deps, taskId);
  const known = options.knownUpdatedAt ?? task.updated_at;
  if (options.waitSeconds <= 0 || isFinal(task.status) || task.updated_at !== known) return task;
  const result = await deps.waits.wait({
    taskId,
    current: task,
    since,
    stillCurrent: (latest) => latest.updated_at === known,
    timeoutMs: Math.min(options.waitSeconds, MAX_TOOL_WAIT_SECONDS) * 1000,
    signal: options.signal,
  });
  return result.task ?? getTask(deps, taskId);
}

/** How long one hold of awaitFinalTask lasts before it looks again (bounds a lost wake-up). */
const FINAL_HOLD_MS = 5 * 60_000;

/**
 * The task once it is final (delivered or rejected). Holds as long as it takes, until the signal
 * aborts; throws service_unavailable when the service shuts down meanwhile.
 */
export async function awaitFinalTask(deps: ServiceDeps, taskId: string, signal?: AbortSignal): Promise<Task> {
  for (;;) {
    const since = deps.waits.mark();
    const task = await getTask(deps, taskId);
    if (isFinal(task.status)) return task;
    if (deps.waits.closed || signal?.aborted) {
      throw new AppError('service_unavailable', 'The service is shutting down and stopped waiting for this task: ask again in a moment.');
    }
    await deps.waits.wait({ taskId, current: task, since, stillCurrent: (latest) => !isFinal(latest.status), timeoutMs: FINAL_HOLD_MS, signal });
  }
}

/**
 * The task once it is final, or as it is after `maxSeconds`: one bounded slice of
 * awaitFinalTask, for callers that must answer before a client's request timeout.
 */
export async function awaitFinalTaskFor(deps: ServiceDeps, taskId: string, maxSeconds: number, signal?: AbortSignal): Promise<Task> {
  const since = deps.waits.mark();
  const task = await getTask(deps, taskId);
  if (isFinal(task.status) || maxSeconds <= 0) return task;
  const result = await deps.waits.wait({
    taskId,
    current: task,
    since,
    stillCurrent: (latest) => !isFinal(latest.status),
    timeoutMs: maxSeconds * 1000,
    signal,
  });
  return result.task ?? getTask(deps, taskId);
}
