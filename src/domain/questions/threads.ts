import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Type, { type Static } from 'typebox';

/**
 * Message threads for agents without a mailbox (contract, "Questions from the operator, answers
 * from the requester"): a message's thread token, shown once, reads the operator's replies. Only
 * its SHA-256 is stored; a wrong or missing token is a plain 404, so message ids cannot be probed.
 */

/** `mt_<43 base64url>`: 256 random bits. */
export function newThreadToken(): string {
  return `mt_${randomBytes(32).toString('base64url')}`;
}
export const THREAD_TOKEN_PATTERN = /^mt_[A-Za-z0-9_-]{43}$/;

export function threadTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time: does `token` hash to `storedHash`? */
export function threadTokenMatches(token: string, storedHash: string | null): boolean {
  if (storedHash === null || !THREAD_TOKEN_PATTERN.test(token)) return false;
  const given = Buffer.from(threadTokenHash(token), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export const ThreadReplySchema = Type.Object({
  reply_id: Type.String({ description: 'rpl-<year>-<32 hex>' }),
  message: Type.String({ description: "The operator's reply." }),
  created_at: Type.String({ format: 'date-time' }),
});

export const MessageThreadSchema = Type.Object(
  {
    message_id: Type.String({ description: 'msg-<year>-<32 hex>' }),
    created_at: Type.String({ format: 'date-time' }),
    subject: Type.Union([Type.String(), Type.Null()]),
    replies: Type.Array(ThreadReplySchema, { description: "The operator's replies, oldest first ([] until the operator answers)." }),
  },
  { description: 'A message and the operator’s replies, read with its thread_token.' },
);
export type MessageThread = Static<typeof MessageThreadSchema>;
