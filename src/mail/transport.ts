import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { composeMail, mailEnvelope, type OutgoingMail } from './mime.js';
import { SmtpPool, type SmtpPoolOptions } from './smtp-client.js';

export type { OutgoingMail } from './mime.js';

/**
 * Where a mail goes: SMTP over SMTP_URL (mail/smtp-client.ts, messages from mail/mime.ts), or
 * `.eml` files without it. nodemailer's transport is not used: composing and sending through it
 * cost ~0.77 ms of CPU a mail (docs/decisions.md); its encoders still are, loaded with the first
 * mail, so an instance that sends none (no OPERATOR_EMAIL, agents without contact_email) never
 * pays their memory. Nothing connects before the first mail.
 */

export interface MailTransport {
  /** `smtp` or `eml` (the dev outbox directory). */
  readonly name: 'smtp' | 'eml';
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** One thing per transport, created on first use; close() closes it if it was, and never creates it. */
function lazy<T>(create: () => T, close: (value: T) => void): { get: () => T; close: () => void } {
  let value: T | undefined;
  return {
    get: () => {
      value ??= create();
      return value;
    },
    close: () => {
      if (value !== undefined) close(value);
    },
  };
}

/**
 * SMTP through a pool of up to `connections` kept connections (a new connection per mail capped
 * throughput at a few mails a second against a slow server). The URL was checked at start
 * (config.ts); the pool is made with the first mail.
 */
function smtpTransport(smtpUrl: string, connections: number, options: Partial<SmtpPoolOptions> = {}): MailTransport {
  const pool = lazy(
    () => new SmtpPool({ connectionTimeoutMs: 10_000, greetingTimeoutMs: 10_000, socketTimeoutMs: 30_000, ...options, url: smtpUrl, poolSize: connections }),
    (p) => p.close(),
  );
  return {
    name: 'smtp',
    async send(mail) {
      const message = composeMail(mail);
      await pool.get().send(mailEnvelope(mail), message);
    },
    close: pool.close,
  };
}

/** Without SMTP_URL: the full MIME message as `<DATA_DIR>/outbox/<created>_<kind>_<id>.eml`, LF line endings. */
function emlTransport(dataDir: string): MailTransport {
  const directory = path.join(dataDir, 'outbox');
  return {
    name: 'eml',
    async send(mail) {
      const message = Buffer.from(composeMail(mail).toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
      await mkdir(directory, { recursive: true });
      const name = `${mail.createdAt.replace(/[:.]/g, '-')}_${mail.kind}_${mail.id}.eml`;
      const file = path.join(directory, name);
      // Written aside then renamed, so a reader never sees half a message.
      await writeFile(`${file}.tmp`, message);
      await rename(`${file}.tmp`, file);
    },
    close: () => undefined,
  };
}

/** `smtpOptions` reach the SMTP pool (tests: a `tls.ca`, short timeouts). */
export function createMailTransport(config: Pick<Config, 'smtpUrl' | 'dataDir' | 'mail'>, smtpOptions?: Partial<SmtpPoolOptions>): MailTransport {
  return config.smtpUrl ? smtpTransport(config.smtpUrl, config.mail.concurrency, smtpOptions) : emlTransport(config.dataDir);
}
