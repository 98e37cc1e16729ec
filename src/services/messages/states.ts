import { AppError } from '../../domain/errors.js';
import type { AdminMessage } from '../../domain/tasks/admin-schemas.js';
import { type Actor, actorName } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { withTransaction } from '../../store/db.js';
import { findMessage, listWaitingMessageRows, markMessageDone, messageDoneStates, waitingMessageCount } from '../../store/messages/messages-repo.js';
import { taskSummaries } from '../../store/tasks/tasks-repo.js';
import { toAdminMessage } from '../console/reads.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';

/**
 * The operator's inbox of messages (docs/inbox.md): a message waits until an operator
 * answers it (message-replies.ts marks it in the reply's transaction) or marks it done here. The
 * change, its audit entry and the kept count commit together.
 */

/** "Mark done": true when it was waiting, false when someone had done it already. */
export async function markDone(deps: ServiceDeps, actor: Actor, messageId: string): Promise<boolean> {
  return withTransaction(deps.store.db, async (trx) => {
    const message = messageId.length <= 200 ? await findMessage(trx, messageId) : undefined;
    if (!message) throw new AppError('not_found', 'No message has that id.');
    const changed = await markMessageDone(trx, messageId, iso(deps.clock.now()), actorName(actor));
    if (!changed) return false;
    const taskIds = JSON.parse(message.task_ids) as string[];
    for (const taskId of taskIds.length > 0 ? taskIds : [null]) {
      await recordAudit(trx, deps, { actor, action: 'message.done', taskId, details: { message_id: messageId } });
    }
    return true;
  });
}

/** Messages waiting for an operator, newest first (the inbox and the messages page's first view). */
export async function waitingMessages(deps: ServiceDeps, limit: number): Promise<AdminMessage[]> {
  return (await listWaitingMessageRows(deps.store.db, limit)).map(toAdminMessage);
}

/** How many messages wait: a kept count, the same cost whatever the history. */
export async function waitingCount(deps: Pick<ServiceDeps, 'store'>): Promise<number> {
  return waitingMessageCount(deps.store.db);
}

/** Which of these messages are done (answered or marked), by id. */
export async function doneStates(deps: ServiceDeps, messageIds: readonly string[]): Promise<Map<string, string | null>> {
  return messageDoneStates(deps.store.db, messageIds);
}

export interface NamedTask {
  status: string;
  task_type: string;
  description: string;
}

/** The tasks messages name, by id: status and the words the inbox titles them with. */
export async function namedTasks(deps: ServiceDeps, taskIds: readonly string[]): Promise<Map<string, NamedTask>> {
  const rows = await taskSummaries(deps.store.db, [...new Set(taskIds)]);
  return new Map(rows.map((r) => [r.id, { status: r.status, task_type: r.task_type, description: r.description }]));
}
