import type { Db } from '../store/db.js';
import type { MessageRow } from '../store/messages/messages-repo.js';
import { assigneeOf } from '../store/team/assignments-repo.js';
import { findOperator, type OperatorRow, onDutyOperators } from '../store/team/operators-repo.js';

/**
 * Who an operator alert goes to (contract "A team of operators"), one rule for mail (outbox.ts)
 * and Web Push (services/alerts/push.ts): an alert about an assigned task (an answer, a message naming
 * it, a passed deadline) goes to its assignee while they are enabled; a new task, or a task nobody
 * holds, to every operator on duty; when nobody is on duty (or there is no team), to the
 * deployment's fallback as before teams: OPERATOR_EMAIL, and every subscribed device except those
 * of disabled operators.
 */
export type AlertAudience = { kind: 'operators'; operators: Pick<OperatorRow, 'id' | 'email'>[] } | { kind: 'fallback' };

/** The audience of an alert about `taskId` (undefined: about no task in particular, or a new one). */
export async function alertAudience(db: Db, taskId: string | undefined): Promise<AlertAudience> {
  const assignee = taskId ? await assigneeOf(db, taskId) : null;
  const holder = assignee ? await findOperator(db, assignee) : undefined;
  if (holder && holder.disabled === 0) return { kind: 'operators', operators: [holder] };
  const onDuty = await onDutyOperators(db);
  return onDuty.length > 0 ? { kind: 'operators', operators: onDuty } : { kind: 'fallback' };
}

/** How many named tasks a message's alert lists (a message may quote many ids). */
const NAMED_TASKS_MAX = 10;

/** The ids of the tasks a message names (its stored list), at most NAMED_TASKS_MAX. */
export function namedTaskIds(message: Pick<MessageRow, 'task_ids'>): string[] {
  try {
    const parsed: unknown = JSON.parse(message.task_ids);
    return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === 'string').slice(0, NAMED_TASKS_MAX) : [];
  } catch {
    return [];
  }
}

/** The task a message alerts about: the one it names when it names exactly one (its assignee is told). */
export function messageAlertTask(message: Pick<MessageRow, 'task_ids'>): string | undefined {
  const ids = namedTaskIds(message);
  return ids.length === 1 ? ids[0] : undefined;
}
