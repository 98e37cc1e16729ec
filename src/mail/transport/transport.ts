import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { composeMail, type OutgoingMail } from './mime.js';
import type { SmtpPoolOptions } from './smtp-client.js';
import { ThreadTransport } from './thread-transport.js';

export type { OutgoingMail } from './mime.js';

/**
 * Where a mail goes: SMTP over SMTP_URL (mail/transport/smtp-client.ts, messages from mail/transport/mime.ts), or
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

/**
 * SMTP through a pool of up to `connections` kept connections (a new connection per mail capped
 * throughput at a few mails a second against a slow server), composed and sent on a thread of
 * its own (mail/transport/thread-transport.ts) that starts with the first mail. The URL was checked at
 * start (config.ts).
 */
function smtpTransport(smtpUrl: string, connections: number, smtpOptions?: Partial<SmtpPoolOptions>): MailTransport {
  return new ThreadTransport({ smtpUrl, connections, smtpOptions });
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
