/**
 * SMTP_URL, parsed: one rule for the configuration (checked at start, config.ts) and the SMTP
 * client (mail/transport/smtp-client.ts).
 */

/** Where to send: the parsed SMTP_URL. */
export interface SmtpServerAddress {
  host: string;
  port: number;
  /** smtps: TLS from the first byte; smtp: plain, upgraded with STARTTLS when offered. */
  secure: boolean;
  user?: string;
  password?: string;
}

/** Thrown by parseSmtpUrl; the message never carries the URL (it may hold a password). */
export class SmtpUrlError extends Error {
  override readonly name = 'SmtpUrlError';
}

/**
 * `smtp://user:pass@host:port` or `smtps://…` (WHATWG URL; user and password percent-decoded;
 * ports 587 and 465 by default, as nodemailer). No path, query or fragment: nodemailer's query
 * options (`?secure=`, `?tls.rejectUnauthorized=`…) are refused rather than silently ignored.
 */
export function parseSmtpUrl(value: string): SmtpServerAddress {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SmtpUrlError('is not a URL (smtp://user:pass@host:port or smtps://user:pass@host:port)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new SmtpUrlError(`must use smtp: or smtps:, got ${url.protocol}`);
  if (url.hostname === '') throw new SmtpUrlError('has no host');
  if (url.pathname !== '' && url.pathname !== '/') throw new SmtpUrlError('must not have a path');
  if (url.search !== '' || url.hash !== '') {
    throw new SmtpUrlError('must not have a query or fragment: use smtps: for TLS from the start, and NODE_EXTRA_CA_CERTS to trust a private certificate');
  }
  const secure = url.protocol === 'smtps:';
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new SmtpUrlError(`has a malformed percent-encoding in its ${what}`);
    }
  };
  const user = url.username === '' ? undefined : decode(url.username, 'user name');
  const password = url.password === '' ? undefined : decode(url.password, 'password');
  if (password !== undefined && user === undefined) throw new SmtpUrlError('has a password but no user name');
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(user === undefined ? {} : { user, password: password ?? '' }),
  };
}
