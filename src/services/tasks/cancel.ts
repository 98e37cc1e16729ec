import * as guards from '../../abuse/guards.js';
import { newMessageId } from '../../domain/ids.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal, type TaskStatus } from '../../domain/tasks/task.js';
import { WITHDRAWN_REASON } from '../../domain/tasks/withdrawal.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { withTransaction } from '../../store/db.js';
import { insertMessage, type MessageRow } from '../../store/messages/messages-repo.js';
import { findTask, type TaskRow, toPublicTask, updateTaskIfStatus } from '../../store/tasks/tasks-repo.js';
import { planPatch } from '../console/transitions.js';
import type { Caller, ServiceDeps } from '../context.js';
import { enqueueTaskEvent } from '../delivery/webhooks.js';
import { recordAudit } from '../team/audit.js';
import { getTask } from './tasks.js';
import { type CancellationDoor, doorName, requestWithdrawal, WITHDRAWAL_DECIDED_BY_OPERATOR } from './withdrawal.js';

/**
 * A requester's cancellation, the same on every door (REST POST /api/v1/tasks/{task_id}/cancel,
 * MCP tasks/cancel on both revisions, A2A CancelTask; contract "A2A 1.0"):
 * - a `submitted` task nobody accepted is withdrawn at once: rejected with WITHDRAWN_REASON, with
 *   its audit entry, the requester's mail and webhook as for any rejection, and a message linked to
 *   the task that tells the operator, all in one transaction ('withdrawn');
 * - an accepted task gets the operator a withdrawal request (withdrawal.ts) and stays as it is: the
 *   operator decides ('requested');
 * - a final task is left alone ('final'): each door answers it with its own refusal.
 * The withdrawal is a conditional update (WHERE status = 'submitted'), as the operator's accept is:
 * when both race, exactly one wins, and a cancellation that loses becomes a withdrawal request.
 * A withdrawal request is a message the requester sends (blocklist and message quota); a
 * withdrawal at once is not (the blocklist only): the operator's notice of it is the service's.
 */

export type { CancellationDoor } from './withdrawal.js';

export interface CancellationContext {
  deps: ServiceDeps;
  caller: Caller;
}

export interface Cancellation {
  outcome: 'withdrawn' | 'requested' | 'final';
  /** The task after the cancellation: rejected when withdrawn, otherwise as it was. */
  task: Readonly<PublicTask>;
  /** What happened, in a sentence for the requester. */
  message: string;
  /** The message that told the operator (absent for a final task). */
  message_id?: string;
}

export const FINAL_TASK_MESSAGE = 'The task is final: there is nothing to withdraw.';

export async function requestCancellation(ctx: CancellationContext, taskId: string, door: CancellationDoor): Promise<Cancellation> {
  const { deps, caller } = ctx;
  let task = await getTask(deps, taskId);
  if (task.status === 'submitted') {
    const withdrawn = await withdrawAtOnce(deps, caller, task.task_id, door);
    if (withdrawn) return { outcome: 'withdrawn', task: withdrawn.task, message: WITHDRAWN_REASON, message_id: withdrawn.messageId };
    // Accepted (or rejected) meanwhile: the store has the truth, the read cache may lag behind it.
    const row = await findTask(deps.store.db, task.task_id);
    if (row) task = toPublicTask(row);
  }
  if (isFinal(task.status)) return { outcome: 'final', task, message: FINAL_TASK_MESSAGE };
  let request: Awaited<ReturnType<typeof requestWithdrawal>>;
  try {
    request = await requestWithdrawal(deps, caller, task.task_id, door);
  } catch (error) {
    // Finished between the read and the request: answered as any final task.
    const row = await findTask(deps.store.db, task.task_id);
    if (row && isFinal(row.status as TaskStatus)) return { outcome: 'final', task: toPublicTask(row), message: FINAL_TASK_MESSAGE };
    throw error;
  }
  return { outcome: 'requested', task, message: WITHDRAWAL_DECIDED_BY_OPERATOR, message_id: request.message_id };
}

/** The withdrawal of a task still `submitted`, or undefined when it was not (any more). */
async function withdrawAtOnce(
  deps: ServiceDeps,
  caller: Caller,
  taskId: string,
  door: CancellationDoor,
): Promise<{ task: Readonly<PublicTask>; messageId: string } | undefined> {
  await guards.screenBlocklist(deps, caller);
  const found = await findTask(deps.store.db, taskId);
  if (!found || found.status !== 'submitted') return undefined;
  const now = deps.clock.now();
  // The requester acts, not the operator: the first view stays unstamped.
  const { seen_by_operator_at: _notSeen, ...changes } = planPatch(found, { status: 'rejected', operator_notes: WITHDRAWN_REASON }, now);
  const message = operatorNotice(found, caller, door, now);
  const next = await withTransaction(deps.store.db, async (trx) => {
    if (!(await updateTaskIfStatus(trx, taskId, 'submitted', changes))) return undefined;
    const next: TaskRow = { ...found, ...changes };
    await outbox.enqueueTaskTransition(trx, deps, next);
    await enqueueTaskEvent(trx, deps, next);
    await recordAudit(trx, deps, {
      actor: 'requester',
      action: 'task.rejected',
      taskId,
      details: { from: 'submitted', to: 'rejected', withdrawn: true, door },
    });
    await insertMessage(trx, message);
    await outbox.enqueueMessageReceived(trx, deps, message);
    await deps.changes.publish({ kind: 'task', taskId }, trx);
    await deps.changes.publish({ kind: 'message', messageId: message.id, taskId }, trx);
    return next;
  });
  if (!next) return undefined;
  deps.log.info({ task_id: taskId, door }, 'task withdrawn at the requester’s request');
  return { task: toPublicTask(next), messageId: message.id };
}

/** The message that tells the operator a task was withdrawn before anyone accepted it. */
function operatorNotice(task: TaskRow, caller: Caller, door: CancellationDoor, now: Date): MessageRow {
  return {
    id: newMessageId(now),
    message: `Task ${task.id} was withdrawn at the requester's request before anyone accepted it (through ${doorName(door)}). It is rejected with the reason "${WITHDRAWN_REASON}"; nothing more to do.`,
    reply_to: task.contact_email ?? '',
    sender: null,
    subject: `Withdrawn: ${task.id}`,
    client_hash: caller.clientHash,
    task_ids: JSON.stringify([task.id]),
    email_unverified: 0,
    created_at: iso(now),
    erased_at: null,
    thread_token_hash: null,
    done_at: null,
    done_by: null,
  };
}
