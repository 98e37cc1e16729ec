import type { PublicTask } from '../../domain/tasks/schemas.js';
import { findContextId } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { getTask } from '../tasks/tasks.js';
import { type A2ATask, toA2ATask } from './mapping.js';

/** A task and the A2A context it belongs to (task_not_found when no task has the id). */
export async function taskInContext(deps: ServiceDeps, taskId: string): Promise<{ task: Readonly<PublicTask>; contextId: string }> {
  const task = await getTask(deps, taskId);
  const contextId = (await findContextId(deps.store.db, task.task_id)) ?? '';
  return { task, contextId };
}

/** The A2A `Task` of a task, by its id (the id is the capability, as over REST). */
export async function getA2ATask(deps: ServiceDeps, taskId: string, historyLength?: number): Promise<A2ATask> {
  const { task, contextId } = await taskInContext(deps, taskId);
  return toA2ATask(task, contextId, { baseUrl: deps.config.baseUrl, historyLength });
}
