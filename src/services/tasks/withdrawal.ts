import * as guards from '../../abuse/guards.js';
import { AppError } from '../../domain/errors.js';
import { newMessageId } from '../../domain/ids.js';
import { isFinal } from '../../domain/tasks/task.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { withTransaction } from '../../store/db.js';
import { insertMessage, type MessageRow, messagesNamingTask } from '../../store/messages/messages-repo.js';
import { findTask } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';
import { getTask } from './tasks.js';

/**
 * A requester's withdrawal request: a message to the operator naming the task, as
 * POST /api/v1/messages would send one (same blocklist and message quota), linked to the task.
 * The status does not change: the operator decides, and withdraws by rejecting the task.
 * Sent by services/tasks/cancel.ts for a task someone accepted already (REST, MCP and A2A cancel).
 */

/** The door a cancellation came through, named in what the operator reads. */
export type CancellationDoor = 'rest' | 'mcp' | 'a2a';

const DOOR_NAMES: Record<CancellationDoor, string> = {
  rest: 'POST /api/v1/tasks/{task_id}/cancel',
  mcp: 'MCP tasks/cancel',
  a2a: 'A2A CancelTask',
};

export function doorName(door: CancellationDoor): string {
  return DOOR_NAMES[door];
}

export interface WithdrawalRequest {
  task_id: string;
  status: string;
  message_id: string;
  message: string;
}

export const WITHDRAWAL_DECIDED_BY_OPERATOR =
  'Withdrawal requested: the human operator decides, and withdraws the task by rejecting it ("Withdrawn at the requester\'s request."). Until then its status does not change.';

export async function requestWithdrawal(deps: ServiceDeps, caller: Caller, taskId: string, door: CancellationDoor): Promise<WithdrawalRequest> {
  const task = await getTask(deps, taskId);
  if (isFinal(task.status)) {
    throw new AppError('invalid_transition', `Task ${task.task_id} is already ${task.status}: there is nothing to withdraw.`);
  }
  // Asked already: the same answer, without a second message for the operator (clients retry).
  const subject = `Withdrawal request for ${task.task_id}`;
  const earlier = (await messagesNamingTask(deps.store.db, task.task_id)).find((message) => message.subject === subject);
  if (earlier) return { task_id: task.task_id, status: task.status, message_id: earlier.id, message: WITHDRAWAL_DECIDED_BY_OPERATOR };
  await guards.screenMailboxlessMessage(deps, caller);
  const now = deps.clock.now();
  const at = iso(now);
  // The operator answers a withdrawal by acting on the task; the contact address (if any) is where a reply would go.
  const contact = (await findTask(deps.store.db, task.task_id))?.contact_email ?? '';
  const row: MessageRow = {
    id: newMessageId(now),
    message: `Please withdraw task ${task.task_id}: it is no longer needed. (Sent as a withdrawal request through ${doorName(door)}.)`,
    reply_to: contact,
    sender: null,
    subject,
    client_hash: caller.clientHash,
    task_ids: JSON.stringify([task.task_id]),
    email_unverified: 0,
    created_at: at,
    erased_at: null,
    thread_token_hash: null,
    done_at: null,
    done_by: null,
  };
  try {
    await withTransaction(deps.store.db, async (trx) => {
      await guards.consumeMessageQuota(trx, deps, caller);
      await insertMessage(trx, row);
      await deps.changes.publish({ kind: 'message', messageId: row.id, taskId: task.task_id }, trx);
      await outbox.enqueueMessageReceived(trx, deps, row);
    });
  } catch (error) {
    await guards.noteRefusal(deps, caller, error);
    throw error;
  }
  deps.log.info({ message_id: row.id, task_id: task.task_id }, 'withdrawal requested');
  return { task_id: task.task_id, status: task.status, message_id: row.id, message: WITHDRAWAL_DECIDED_BY_OPERATOR };
}
