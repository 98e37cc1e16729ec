import * as guards from '../abuse/guards.js';
import { newMessageId, taskIdsIn } from '../domain/ids.js';
import type { MessageResponse } from '../domain/schemas.js';
import { iso } from '../domain/time.js';
import * as outbox from '../mail/outbox.js';
import { withTransaction } from '../store/db.js';
import { insertMessage, type MessageRow } from '../store/messages-repo.js';
import type { Caller, ServiceDeps } from './context.js';

export interface MessageResult {
  statusCode: number;
  body: MessageResponse;
  headers: Record<string, string>;
}

/** Sends a message to the operator. A message naming a task id is linked to that task. */
export async function sendMessage(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<MessageResult> {
  const now = deps.clock.now();
  const { value: input, warnings } = deps.validators.message(raw);
  const screening = await guards.screenMessage(deps, caller, input);
  const at = iso(now);
  const row: MessageRow = {
    id: newMessageId(now),
    message: input.message,
    reply_to: input.reply_to,
    sender: input.from ?? null,
    subject: input.subject ?? null,
    client_hash: caller.clientHash,
    task_ids: JSON.stringify(taskIdsIn(`${input.subject ?? ''} ${input.message}`)),
    email_unverified: screening.emailUnverified ? 1 : 0,
    created_at: at,
    erased_at: null,
  };
  let headers: Record<string, string>;
  try {
    headers = await withTransaction(deps.store.db, async (trx) => {
      const quotaHeaders = await guards.consumeMessageQuota(trx, deps, caller);
      await insertMessage(trx, row);
      // One change per task the message names (a withdrawal, a question; the first few), or one unlinked.
      const named = (JSON.parse(row.task_ids) as string[]).slice(0, 20);
      for (const taskId of named.length > 0 ? named : [null]) await deps.changes.publish({ kind: 'message', messageId: row.id, taskId }, trx);
      await outbox.enqueueMessageReceived(trx, deps, row);
      return quotaHeaders;
    });
  } catch (error) {
    await guards.noteRefusal(deps, caller, error);
    throw error;
  }
  const body: MessageResponse = {
    message_id: row.id,
    created_at: at,
    message: 'Message received. The operator answers by e-mail to reply_to.',
  };
  if (warnings.length > 0) body.warnings = warnings;
  deps.log.info({ message_id: row.id }, 'message received');
  return { statusCode: 201, body, headers };
}
