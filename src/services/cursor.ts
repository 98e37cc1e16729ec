import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque, tamper-evident cursors: `<payload>.<mac>`, the payload base64url text, the MAC an HMAC
 * over the server secret (shared by every instance) bound to a scope, so a cursor edited, forged
 * or carried to another list is refused. Callers choose the payload and the error they answer.
 */

const MAC_BYTES = 16;
const CURSOR = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/;

function mac(secret: Buffer, scope: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`cursor\n${scope}\n${payload}`).digest().subarray(0, MAC_BYTES);
}

/** `scope` names what the cursor pages through, e.g. `services` or `admin:tasks:open`. */
export function signCursor(secret: Buffer, scope: string, text: string): string {
  const payload = Buffer.from(text, 'utf8').toString('base64url');
  return `${payload}.${mac(secret, scope, payload).toString('base64url')}`;
}

/** The text a cursor carries, or null when this service did not issue it for this scope. */
export function openCursor(secret: Buffer, scope: string, cursor: string): string | null {
  const match = CURSOR.exec(cursor);
  if (!match) return null;
  const [, payload = '', signature = ''] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, scope, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return Buffer.from(payload, 'base64url').toString('utf8');
}
