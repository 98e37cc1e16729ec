import { randomBytes } from 'node:crypto';
import { type MessageReply, REPLY_MAX } from '../domain/admin-schemas.js';
import { AppError, validationFailed } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import * as outbox from '../mail/outbox.js';
import { withTransaction } from '../store/db.js';
import { insertReply, type MessageReplyRow, repliesTo } from '../store/message-replies-repo.js';
import { findMessage } from '../store/messages-repo.js';
import type { ServiceDeps } from './context.js';

/**
 * The operator answers a message (contract "Talking with the operator"): the reply is recorded and
 * its mail to the message's reply_to queued in one transaction, so a reply shown on the task page
 * is always a reply that will be sent. One function for the console and the admin API.
 */

function toReply(row: MessageReplyRow): MessageReply {
  return { reply_id: row.id, message_id: row.message_id, message: row.body, created_at: row.created_at };
}

/** `{message}`: every problem at once; unknown fields are errors (an operator's typo must not pass silently). */
function parseReply(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('malformed_request', 'The request body must be a JSON object.', { details: ['body must be a JSON object: {message}'] });
  }
  const body = raw as Record<string, unknown>;
  const details: string[] = [];
  for (const key of Object.keys(body)) if (key !== 'message') details.push(`${key.slice(0, 64)} is not a field of this request (use message)`);
  const text = typeof body.message === 'string' ? body.message.replace(/\r\n?/g, '\n') : undefined;
  if (body.message === undefined || body.message === null) details.push('message is required');
  else if (text === undefined) details.push('message must be a string');
  else if (text.trim() === '' || text.length > REPLY_MAX) details.push(`message must be between 1 and ${REPLY_MAX} characters`);
  else if (text.includes('\u0000')) details.push('message must not contain NUL characters');
  if (details.length > 0) throw validationFailed(details);
  return text as string;
}

export async function replyToMessage(deps: ServiceDeps, messageId: string, raw: unknown): Promise<MessageReply> {
  const text = parseReply(raw);
  const now = deps.clock.now();
  const row: MessageReplyRow = {
    id: `rpl-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`,
    message_id: messageId,
    body: text,
    created_at: iso(now),
  };
  await withTransaction(deps.store.db, async (trx) => {
    const message = messageId.length <= 200 ? await findMessage(trx, messageId) : undefined;
    if (!message) throw new AppError('not_found', 'No message has that id.');
    // Retention erases a message's address after RETENTION_DAYS: there is nobody left to mail.
    if (message.reply_to === '') throw validationFailed(['message_id names a message whose address was erased by retention; it cannot be answered']);
    await insertReply(trx, row);
    await outbox.enqueueMessageReply(trx, deps, message, row.id, text);
  });
  deps.log.info({ message_id: messageId, reply_id: row.id }, 'operator replied to a message');
  return toReply(row);
}

/** The replies to each message, oldest first (the task page shows the conversation). */
export async function repliesByMessage(deps: ServiceDeps, messageIds: readonly string[]): Promise<Map<string, MessageReply[]>> {
  const rows = await repliesTo(deps.store.db, messageIds);
  return new Map([...rows].map(([id, list]) => [id, list.map(toReply)]));
}
