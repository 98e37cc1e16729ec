import { AppError } from '../../domain/errors.js';
import { openToken, signToken } from '../runtime/signed-token.js';

/**
 * Opaque, tamper-evident cursors for the operator's lists: the position (created_at, id) of the
 * last row served, bound to the list and its filter (see signed-token.ts).
 * A cursor edited, forged or carried to another list or filter is refused with `invalid_cursor`.
 */

export interface Position {
  created_at: string;
  id: string;
}

/** `scope` names the list and its filter, e.g. `tasks:open` or `messages`. */
export function encodeCursor(secret: Buffer, scope: string, position: Position): string {
  return signToken(secret, `cursor:admin:${scope}`, JSON.stringify([position.created_at, position.id]));
}

export function decodeCursor(secret: Buffer, scope: string, cursor: string): Position {
  const invalid = new AppError('invalid_cursor', 'The cursor was not issued for this list (or was changed). Start again without a cursor.');
  const text = openToken(secret, `cursor:admin:${scope}`, cursor);
  if (text === null) throw invalid;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { created_at: parsed[0], id: parsed[1] };
    }
  } catch {
    // A signed body that does not parse cannot happen unless the secret leaked; treat it as invalid.
  }
  throw invalid;
}

/** The cursor of the page after the one ending at `last`, or null on the last page. */
export function nextCursor(secret: Buffer, scope: string, last: Position | undefined): string | null {
  return last ? encodeCursor(secret, scope, { created_at: last.created_at, id: last.id }) : null;
}
