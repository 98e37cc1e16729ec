import { AppError, validationFailed } from '../../domain/errors.js';
import { emailDomain } from '../../domain/network/email.js';
import type { Actor } from '../../domain/team/actor.js';
import { findTask } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { addBlock, addClientHashBlock, BLOCK_KINDS, type BlockEntry, type BlockKind } from './blocklist.js';

/**
 * Blocks whoever sent a task, in one action from the task page: its client (by the stored hash),
 * its contact e-mail, that e-mail's domain, or its requester. The operator never has to copy a
 * value out of the task (the client address is not even stored).
 */

// The blocklist keeps 500 characters; the task id is appended to the reason.
const REASON_MAX = 400;

export async function blockTaskSender(deps: ServiceDeps, actor: Actor, taskId: string, kind: string, reason: string | undefined): Promise<BlockEntry> {
  const task = taskId.length <= 200 ? await findTask(deps.store.db, taskId) : undefined;
  if (!task) throw new AppError('task_not_found', 'No task has that id.');
  const details: string[] = [];
  if (!(BLOCK_KINDS as readonly string[]).includes(kind)) details.push(`kind must be one of: ${BLOCK_KINDS.join(', ')}`);
  const why = reason?.trim() ?? '';
  if (why.length > REASON_MAX) details.push(`reason must be at most ${REASON_MAX} characters`);
  const text = `${why || 'Blocked from a task'} (task ${task.id})`;
  const domain = task.contact_email ? emailDomain(task.contact_email) : null;
  const value: Record<Exclude<BlockKind, 'ip'>, string | null> = {
    email: task.contact_email,
    domain,
    requester: task.requester.trim() === '' ? null : task.requester,
    agent_key: task.agent_key_id,
    agent_directory: task.agent_directory,
  };
  if (kind === 'email' && !value.email) details.push('kind email: this task has no contact e-mail');
  if (kind === 'domain' && !value.domain) details.push('kind domain: this task has no contact e-mail domain');
  if (kind === 'requester' && !value.requester) details.push('kind requester: this task names no requester');
  if ((kind === 'agent_key' || kind === 'agent_directory') && !value.agent_key) details.push(`kind ${kind}: this task was not sent by a verified agent`);
  if (details.length > 0) throw validationFailed(details);
  if (kind === 'ip') return addClientHashBlock(deps, actor, task.client_hash, text, task.id);
  return addBlock(
    deps,
    actor,
    { kind: kind as Exclude<BlockKind, 'ip'>, value: value[kind as Exclude<BlockKind, 'ip'>] ?? '', reason: text },
    { taskId: task.id },
  );
}
