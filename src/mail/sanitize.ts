import { isPlainAddress } from '../domain/network/email.js';

/**
 * Keeping agent-written text out of mail headers. A header value never carries a line break or a
 * control character (so it cannot end the header and start another, or add a recipient), and
 * only addresses that pass a strict check are ever used as a recipient or Reply-To.
 */

export const SUBJECT_MAX_CHARS = 150;

// C0/C1 controls (CR, LF, TAB, NUL, ESC …), Unicode line/paragraph separators, bidi overrides
// and zero-width characters: nothing a reader needs in a subject line.
const UNSAFE_IN_HEADER = /[\p{Cc}\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+/gu;

/**
 * One line of header text: controls become spaces, runs of space collapse, length capped. `=?`
 * is split so agent text cannot smuggle an RFC 2047 encoded-word that a mail client would decode
 * into a line break (nodemailer passes plain ASCII through unencoded).
 */
export function headerText(value: string, max = SUBJECT_MAX_CHARS): string {
  const line = value.replace(UNSAFE_IN_HEADER, ' ').replace(/=\?/g, '= ?').replace(/\s+/g, ' ').trim();
  // No more UTF-16 units than `max`: no more characters either (a subject three times a mail).
  if (line.length <= max) return line;
  const chars = [...line];
  return chars.length <= max
    ? line
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** True for a plain `local@domain` address safe to put in To or Reply-To (see isPlainAddress). */
export function isSafeAddress(value: string | null | undefined): value is string {
  return typeof value === 'string' && isPlainAddress(value);
}

/** For logs: enough to tell mails apart, never the whole address (`ag***@mail.example.org`). */
export function maskAddress(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return '***';
  return `${value.slice(0, Math.min(2, at))}***${value.slice(at)}`;
}

/** Masks every address inside a free-text string (SMTP error messages quote recipients). */
export function maskAddressesIn(text: string): string {
  return text.replace(/[^\s<>()",;:]+@[^\s<>()",;:]+/g, (address) => maskAddress(address));
}

/** Body text for the store: PostgreSQL text cannot hold NUL, and no reader needs one. */
export function bodyText(value: string): string {
  return value.replace(/\u0000/g, '');
}
