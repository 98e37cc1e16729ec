import { randomBytes } from 'node:crypto';
import { AppError, validationFailed } from '../../domain/errors.js';
import { type MessageReply, type MessageReplyInput, MessageReplyInputSchema } from '../../domain/tasks/admin-schemas.js';
import { type Actor, actorName } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { type Db, withTransaction } from '../../store/db.js';
import { insertReply, type MessageReplyRow, repliesTo } from '../../store/messages/message-replies-repo.js';
import { findMessage, markMessageDone } from '../../store/messages/messages-repo.js';
import type { ServiceDeps } from '../context.js';
import { schemaChecker } from '../tasks/validation.js';
import { recordAudit } from '../team/audit.js';

/**
 * The operator answers a message (contract "Talking with the operator"): the reply is recorded and
 * its mail to the message's reply_to queued in one transaction, so a reply shown on the task page
 * is always a reply that will be sent. One function for the console and the admin API.
 */

function toReply(row: MessageReplyRow): MessageReply {
  return { reply_id: row.id, message_id: row.message_id, message: row.body, created_at: row.created_at };
}

/** `{message}` from its schema; unknown fields are refused (an operator's typo must not pass silently). */
const checkReply = schemaChecker<MessageReplyInput>(MessageReplyInputSchema, { unknown: 'refuse', notAnObject: 'body must be a JSON object: {message}' });

/**
 * What the checker sees: line breaks as the mail will carry them (LF, counted so), a blank message
 * as empty (refused by minLength like an empty one), and null as absent ("message is required").
 */
function normalized(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('message' in raw)) return raw;
  const { message, ...rest } = raw;
  if (message === null) return rest;
  if (typeof message !== 'string') return raw;
  const text = message.replace(/\r\n?/g, '\n');
  return { ...rest, message: text.trim() === '' ? '' : text };
}

/** Every problem at once, each naming its field (the same checker as every other payload). */
export function parseReply(raw: unknown): string {
  const { value, fieldErrors } = checkReply(normalized(raw));
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  return value.message;
}

/**
 * Records the reply, its mail and audit entries in one transaction: its own, or `inTransaction`
 * when the caller's change must commit with it (a held reply and the deletion of its hold).
 */
export async function replyToMessage(deps: ServiceDeps, actor: Actor, messageId: string, raw: unknown, inTransaction?: Db): Promise<MessageReply> {
  const text = parseReply(raw);
  const now = deps.clock.now();
  const row: MessageReplyRow = {
    id: `rpl-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`,
    message_id: messageId,
    body: text,
    created_at: iso(now),
  };
  await withTransaction(inTransaction ?? deps.store.db, async (trx) => {
    const message = messageId.length <= 200 ? await findMessage(trx, messageId) : undefined;
    if (!message) throw new AppError('not_found', 'No message has that id.');
    // Retention erases a message's address after RETENTION_DAYS: there is nobody left to mail.
    if (message.reply_to === '') throw validationFailed(['message_id names a message whose address was erased by retention; it cannot be answered']);
    await insertReply(trx, row);
    // An answered message no longer waits (the inbox, docs/inbox.md).
    await markMessageDone(trx, messageId, row.created_at, actorName(actor));
    await outbox.enqueueMessageReply(trx, deps, message, row.id, text);
    // One entry per task the message names, so each task page shows the reply (none: one entry).
    const taskIds = JSON.parse(message.task_ids) as string[];
    for (const taskId of taskIds.length > 0 ? taskIds : [null]) {
      await recordAudit(trx, deps, { actor, action: 'message.replied', taskId, details: { message_id: messageId, reply_id: row.id } });
    }
  });
  deps.log.info({ message_id: messageId, reply_id: row.id }, 'operator replied to a message');
  return toReply(row);
}

/** The replies to each message, oldest first (the task page shows the conversation). */
export async function repliesByMessage(deps: ServiceDeps, messageIds: readonly string[]): Promise<Map<string, MessageReply[]>> {
  const rows = await repliesTo(deps.store.db, messageIds);
  return new Map([...rows].map(([id, list]) => [id, list.map(toReply)]));
}
