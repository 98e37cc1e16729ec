import type { Change } from '../../store/change-feed.js';
import { countUnseen } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';

/**
 * What the live console tells an open page when something changed (contract "Operator alerts"):
 * which task or message, and how many waiting tasks are still unseen. Changes come from the change
 * feed, so on PostgreSQL a task submitted through any instance reaches every console.
 */

export interface LiveEvent {
  kind: 'task' | 'message';
  task_id: string | null;
  message_id: string | null;
  unseen_tasks: number;
}

export async function unseenTasks(deps: Pick<ServiceDeps, 'store'>): Promise<number> {
  return countUnseen(deps.store.db);
}

export async function liveEvent(deps: Pick<ServiceDeps, 'store'>, change: Change): Promise<LiveEvent> {
  return {
    kind: change.kind,
    task_id: change.taskId,
    message_id: change.kind === 'message' ? change.messageId : null,
    unseen_tasks: await unseenTasks(deps),
  };
}
