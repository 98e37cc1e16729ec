import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/**
 * Conditional reads (contract "Conditional reads and long-polling"): the strong ETag of a JSON
 * representation is a hash of the exact bytes sent, so it changes whenever any field changes and
 * costs no second serialization: the body is serialized once (by the route's own response
 * serializer), hashed, and sent as that string.
 */

export interface Representation {
  body: string;
  etag: string;
}

/**
 * The status read returns the same frozen task object until the task changes (SQLite read cache),
 * and a woken long-poll compares one freshly read object for all its waiters: the serialized form
 * and ETag are remembered per object, so a repeated poll or a wake-up serializes it once. A
 * WeakMap keyed by the object: an entry lives exactly as long as the object (never modified).
 */
const representations = new WeakMap<object, Representation>();

/** The body and ETag of a value, serialized with the reply's route schema (for status 200). */
export function representationOf(reply: FastifyReply, value: object): Representation {
  let found: Representation | undefined = representations.get(value);
  if (found === undefined) {
    const serialized = reply.serialize(value);
    const body = typeof serialized === 'string' ? serialized : Buffer.from(serialized as Uint8Array).toString('utf8');
    found = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"` };
    representations.set(value, found);
  }
  return found;
}

/** The representation already made of a value, if any (nothing is serialized). */
export function madeRepresentation(value: object): Representation | undefined {
  return representations.get(value);
}

/**
 * If-None-Match (RFC 9110 13.1.2): `*`, or a list of entity tags compared weakly (a `W/` prefix
 * is ignored), as GET requires.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false;
  if (header === etag) return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/** The longest hold, in seconds; a larger `wait` is read as this. */
export const MAX_WAIT_SECONDS = 60;

/**
 * The `wait` preference of a Prefer header (RFC 7240), in whole seconds: 0 when absent, zero or
 * not a whole number (then nothing is held), at most MAX_WAIT_SECONDS.
 */
export function preferredWait(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.length > 1000) return 0;
  for (const preference of text.split(',')) {
    // A preference is `token [= value] *(; parameter)`; only its own value counts.
    const head = preference.split(';', 1)[0] ?? '';
    const match = /^\s*wait\s*=\s*"?(\d+)"?\s*$/i.exec(head);
    if (match) return Math.min(MAX_WAIT_SECONDS, Number(match[1]));
  }
  return 0;
}
