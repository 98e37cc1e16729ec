import { maskAddressesIn } from './sanitize.js';

/** What the outbox records and logs about a failed send, and whether trying again can help. */

interface SmtpErrorLike {
  code?: unknown;
  responseCode?: unknown;
  response?: unknown;
  message?: unknown;
}

const LAST_ERROR_MAX = 500;

function fields(error: unknown): SmtpErrorLike {
  return typeof error === 'object' && error !== null ? (error as SmtpErrorLike) : { message: String(error) };
}

export function responseCodeOf(error: unknown): number | undefined {
  const code = fields(error).responseCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * A permanent rejection of this message: a 5xx reply to MAIL FROM, RCPT TO or DATA, or a mail that
 * cannot be written at all (a header the composer refuses, an envelope address the client refuses
 * before asking the server). A 5xx at connect or login (EAUTH, a bad greeting) is the server's or
 * the configuration's problem, not the mail's, so those are retried like an outage and go out
 * once it is fixed.
 */
export function isPermanentRejection(error: unknown): boolean {
  const { code, response: reply } = fields(error);
  if (code === 'EHEADER' || (code === 'EENVELOPE' && reply === undefined)) return true;
  const response = responseCodeOf(error);
  return response !== undefined && response >= 500 && response < 600 && (code === 'EENVELOPE' || code === 'EMESSAGE');
}

/** One line for `last_error`: the code, the server's reply or the message; no control characters. */
export function describeSendError(error: unknown): string {
  const f = fields(error);
  const parts = [
    typeof f.code === 'string' ? f.code : undefined,
    typeof f.response === 'string' ? f.response : typeof f.message === 'string' ? f.message : String(error),
  ];
  const line = parts
    .filter((p): p is string => p !== undefined && p !== '')
    .join(': ')
    .replace(/\p{Cc}+/gu, ' ')
    .trim();
  return line.length <= LAST_ERROR_MAX ? line : `${line.slice(0, LAST_ERROR_MAX - 1)}…`;
}

/** The same for logs, with addresses masked (servers quote the recipient in their replies). */
export function logSafeError(error: unknown): string {
  return maskAddressesIn(describeSendError(error));
}
