import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../domain/errors.js';

/**
 * Opaque, tamper-evident cursors for the operator's lists: the position (created_at, id) of the
 * last row served, bound to the list and its filter, signed with HMAC over the server secret.
 * A cursor edited, forged or carried to another list or filter is refused with `invalid_cursor`.
 */

export interface Position {
  created_at: string;
  id: string;
}

const MAC_BYTES = 16;

function mac(secret: Buffer, scope: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`admin-cursor\n${scope}\n${body}`).digest().subarray(0, MAC_BYTES);
}

/** `scope` names the list and its filter, e.g. `tasks:open` or `messages`. */
export function encodeCursor(secret: Buffer, scope: string, position: Position): string {
  const body = Buffer.from(JSON.stringify([position.created_at, position.id]), 'utf8').toString('base64url');
  return `${body}.${mac(secret, scope, body).toString('base64url')}`;
}

export function decodeCursor(secret: Buffer, scope: string, cursor: string): Position {
  const invalid = new AppError('invalid_cursor', 'The cursor was not issued for this list (or was changed). Start again without a cursor.');
  const [body, signature, extra] = cursor.split('.');
  if (!body || !signature || extra !== undefined) throw invalid;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, scope, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { created_at: parsed[0], id: parsed[1] };
    }
  } catch {
    // A signed body that does not parse cannot happen unless the secret leaked; treat it as invalid.
  }
  throw invalid;
}
