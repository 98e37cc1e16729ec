import * as guards from '../../abuse/guards.js';
import { AppError, validationFailed } from '../../domain/errors.js';
import { newMessageId, taskIdMentions } from '../../domain/ids.js';
import { type MessageThread, newThreadToken, threadTokenHash, threadTokenMatches } from '../../domain/questions/threads.js';
import type { MessageResponse } from '../../domain/tasks/schemas.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { withTransaction } from '../../store/db.js';
import { repliesTo } from '../../store/messages/message-replies-repo.js';
import { findMessage, insertMessage, type MessageRow } from '../../store/messages/messages-repo.js';
import { importedIdsFolded } from '../../store/tasks/imported-ids-repo.js';
import { taskExists } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';

export interface MessageResult {
  statusCode: number;
  body: MessageResponse;
  headers: Record<string, string>;
}

/** Sends a message to the operator. A message naming a task id (in any case) is linked to that task. */
export async function sendMessage(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<MessageResult> {
  const now = deps.clock.now();
  const { value: input, warnings } = deps.validators.message(raw);
  // A task named in task_id must exist (checked before the screening, so a bad one costs no look-up).
  if (input.task_id !== undefined && !(await taskExists(deps.store.db, input.task_id))) {
    throw validationFailed([`task_id names no task: send the task_id a submission returned (${input.task_id.slice(0, 80)})`]);
  }
  const screening = await guards.screenMessage(deps, caller, input);
  const at = iso(now);
  // The service's own ids as named; another deployment's imported ids, named in any case, as stored.
  const named = taskIdMentions(`${input.subject ?? ''} ${input.message}`);
  const taskIds = [
    ...new Set([...(input.task_id === undefined ? [] : [input.task_id]), ...named.own, ...(await importedIdsFolded(deps.store.db, named.folded))]),
  ];
  const threadToken = newThreadToken();
  const row: MessageRow = {
    id: newMessageId(now),
    message: input.message,
    reply_to: input.reply_to,
    sender: input.from ?? null,
    subject: input.subject ?? null,
    client_hash: caller.clientHash,
    task_ids: JSON.stringify(taskIds),
    email_unverified: screening.emailUnverified ? 1 : 0,
    created_at: at,
    erased_at: null,
    thread_token_hash: threadTokenHash(threadToken),
    done_at: null,
    done_by: null,
  };
  // The quota is taken here, unless the screening's DNS query took it already (abuse/guards.ts).
  const { reservation } = screening;
  let headers: Record<string, string>;
  try {
    headers = await withTransaction(deps.store.db, async (trx) => {
      const quotaHeaders = reservation?.headers ?? (await guards.consumeMessageQuota(trx, deps, caller));
      await insertMessage(trx, row);
      // One change per task the message names (a withdrawal, a question; the first few), or one unlinked.
      const named = (JSON.parse(row.task_ids) as string[]).slice(0, 20);
      for (const taskId of named.length > 0 ? named : [null]) await deps.changes.publish({ kind: 'message', messageId: row.id, taskId }, trx);
      await outbox.enqueueMessageReceived(trx, deps, row);
      return quotaHeaders;
    });
  } catch (error) {
    await reservation?.release();
    await guards.noteRefusal(deps, caller, error);
    throw error;
  }
  const body: MessageResponse = {
    message_id: row.id,
    created_at: at,
    message:
      'Message received. The operator answers by e-mail to reply_to; the replies can also be read with the thread_token (GET the message with Authorization: Bearer <thread_token>).',
    thread_token: threadToken,
  };
  if (warnings.length > 0) body.warnings = warnings;
  deps.log.info({ message_id: row.id }, 'message received');
  return { statusCode: 201, body, headers };
}

/**
 * The thread of a message, for whoever holds its thread token (`Authorization: Bearer <token>`).
 * Unknown message, missing or wrong token: the same 404 `not_found`, so ids cannot be probed.
 */
export async function readThread(deps: ServiceDeps, messageId: string, authorization: string | undefined): Promise<MessageThread> {
  const notFound = new AppError('not_found', 'No message with that id and thread token.');
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  if (token === '' || messageId.length > 200) throw notFound;
  const message = await findMessage(deps.store.db, messageId);
  if (!message || !threadTokenMatches(token, message.thread_token_hash)) throw notFound;
  const replies = (await repliesTo(deps.store.db, [message.id])).get(message.id) ?? [];
  return {
    message_id: message.id,
    created_at: message.created_at,
    subject: message.subject,
    replies: replies.map((r) => ({ reply_id: r.id, message: r.body, created_at: r.created_at })),
  };
}
