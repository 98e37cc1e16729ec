import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque, tamper-evident tokens — the services and operator cursors, the console session cookie:
 * `<payload>.<mac>`, the payload base64url text, the MAC an HMAC under a key derived from the
 * server secret (shared by every instance) and bound to a scope, so a token edited, forged or
 * carried to another use is refused. Callers choose the payload and the error they answer.
 */

const TOKEN = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

function mac(key: Buffer, scope: string, payload: string): Buffer {
  return createHmac('sha256', key).update(`${scope}\n${payload}`).digest();
}

/** `scope` names the use, e.g. `cursor:services:v1` or `operator-session`. */
export function signToken(key: Buffer, scope: string, text: string): string {
  const payload = Buffer.from(text, 'utf8').toString('base64url');
  return `${payload}.${mac(key, scope, payload).toString('base64url')}`;
}

/**
 * The text a token carries, or null when this service did not issue it for this scope (or its
 * payload is longer than `maxPayload` characters: cursors are short, a session naming a passkey is not).
 */
export function openToken(key: Buffer, scope: string, token: string, maxPayload = 200): string | null {
  if (token.length > maxPayload + 44) return null;
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, payload = '', signature = ''] = match;
  // The MAC is compared as the text issued, not as the bytes it decodes to: its last character's
  // two unused bits let four spellings decode alike, and an edited token is refused whatever it decodes to.
  const given = Buffer.from(signature, 'latin1');
  const expected = Buffer.from(mac(key, scope, payload).toString('base64url'), 'latin1');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return Buffer.from(payload, 'base64url').toString('utf8');
}
