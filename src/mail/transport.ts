import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Config } from '../config.js';
import { loadOnce } from '../domain/load-once.js';
import type { MailAttachment } from './attachments.js';

interface Nodemailer {
  createTransport: typeof import('nodemailer').createTransport;
  parseConnectionUrl: (url: string) => Record<string, unknown>;
}

/**
 * nodemailer is loaded with the first mail, not at start: an instance that sends none (no
 * OPERATOR_EMAIL, agents without contact_email) never pays its memory. A failed load is tried
 * again by the next send (the worker retries the mail).
 */
const loadNodemailer: () => Promise<Nodemailer> = loadOnce(() =>
  import('nodemailer').then(({ default: nodemailer }) => {
    // Given `{ url }`, nodemailer builds its options from the URL alone and drops every other key
    // (pool, timeouts), so the URL is parsed with nodemailer's own parser and the keys added to it.
    // The module is CommonJS without typings; load it the CommonJS way, typed by hand.
    const { parseConnectionUrl } = createRequire(import.meta.url)('nodemailer/lib/shared') as Pick<Nodemailer, 'parseConnectionUrl'>;
    return { createTransport: nodemailer.createTransport.bind(nodemailer), parseConnectionUrl };
  }),
);

/**
 * One transporter per transport, created on first use (loadOnce: a failed creation is tried again
 * by the next send). Closing closes it if it was ever asked for, and never creates one.
 */
function lazyTransporter(create: (mailer: Nodemailer) => Transporter): { get: () => Promise<Transporter>; close: () => void } {
  const load = loadOnce(() => loadNodemailer().then(create));
  let asked = false;
  return {
    get: () => {
      asked = true;
      return load();
    },
    close: () => {
      if (asked) {
        load().then(
          (transporter) => transporter.close(),
          () => undefined,
        );
      }
    },
  };
}

/** A mail ready to leave: addresses already validated, subject already one safe line. */
export interface OutgoingMail {
  /** The outbox row id; also the Message-ID's left part, so a resend can be recognised. */
  id: string;
  kind: string;
  from: string;
  to: string;
  replyTo: string | null;
  subject: string;
  text: string;
  html: string | null;
  createdAt: string;
  /** The Message-ID this mail answers: In-Reply-To and References, so mail clients thread it. */
  inReplyTo?: string | null;
  /** Files loaded from the store at send time (the delivery mail's evidence). */
  attachments?: MailAttachment[];
}

export interface MailTransport {
  /** `smtp` or `eml` (the dev outbox directory). */
  readonly name: 'smtp' | 'eml';
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Nodemailer message options. Addresses go in as objects so nodemailer never parses a list out of them. */
function message(mail: OutgoingMail) {
  const domain = mail.from.slice(mail.from.lastIndexOf('@') + 1);
  return {
    from: { name: '', address: mail.from },
    to: [{ name: '', address: mail.to }],
    ...(mail.replyTo ? { replyTo: [{ name: '', address: mail.replyTo }] } : {}),
    subject: mail.subject,
    text: mail.text,
    ...(mail.html ? { html: mail.html } : {}),
    ...(mail.attachments && mail.attachments.length > 0
      ? {
          attachments: mail.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            content: a.content,
            contentDisposition: 'attachment' as const,
          })),
        }
      : {}),
    messageId: `<${mail.id}@${domain}>`,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo, references: [mail.inReplyTo] } : {}),
    date: new Date(mail.createdAt),
    // Agent text must never make nodemailer read a local file or fetch a URL as an attachment.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** The connection options nodemailer hands its socket hook (the parsed SMTP_URL). */
interface SocketOptions {
  host?: string;
  port?: number | string;
  secure?: boolean;
  connectionTimeout?: number;
}

/**
 * Opens the TCP connection for nodemailer's pool (its `getSocket` hook) with Nagle's algorithm
 * off. nodemailer leaves it on, so each message's last write waited for the server's delayed
 * acknowledgement: 45 ms a mail, 22 mails a second per connection against a local server (615
 * with it off). nodemailer still speaks SMTP on the socket, including implicit TLS (smtps:) and
 * STARTTLS, which wrap it. When the connection cannot be opened, nodemailer is told to open its
 * own, which fails the same way and reports it as usual: the pool never recovers the slot of a
 * connection whose socket hook failed, so an outage would otherwise stall every later send.
 */
function openSocket(options: SocketOptions, callback: (error: null, socket: { connection: Socket } | false) => void): void {
  const port = Number(options.port) || (options.secure ? 465 : 587);
  const socket = connect({ host: options.host ?? 'localhost', port, noDelay: true });
  const timer = setTimeout(() => done(false), options.connectionTimeout ?? 10_000);
  let settled = false;
  function done(connected: boolean): void {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if (connected) {
      callback(null, { connection: socket });
    } else {
      socket.destroy();
      callback(null, false);
    }
  }
  // Left in place once connected (settled, it does nothing): nodemailer adds its own.
  socket.once('error', () => done(false));
  socket.once('connect', () => done(true));
}

/**
 * SMTP over SMTP_URL through nodemailer's pool: up to `connections` connections kept open and
 * reused (a new connection per mail capped throughput at a few mails a second against a slow
 * server). A connection the server closes, or that fails, is dropped and a new one opened.
 */
function smtpTransport(smtpUrl: string, connections: number): MailTransport {
  const options = {
    pool: true,
    maxConnections: connections,
    maxMessages: 100,
    // A connection lost mid-send fails that send; the worker's own retry (with backoff and the
    // stable Message-ID) decides what happens next, never a silent resend inside the pool.
    maxRequeues: 0,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true,
    getSocket: openSocket,
  };
  const transporter = lazyTransporter(({ createTransport, parseConnectionUrl }) =>
    createTransport({ ...parseConnectionUrl(smtpUrl), ...options } as SMTPPool.Options),
  );
  return {
    name: 'smtp',
    async send(mail) {
      await (await transporter.get()).sendMail(message(mail));
    },
    close: transporter.close,
  };
}

/** Without SMTP_URL: the full MIME message as `<DATA_DIR>/outbox/<created>_<kind>_<id>.eml`. */
function emlTransport(dataDir: string): MailTransport {
  const directory = path.join(dataDir, 'outbox');
  const transporter = lazyTransporter(({ createTransport }) => createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
  return {
    name: 'eml',
    async send(mail) {
      const info = await (await transporter.get()).sendMail(message(mail));
      await mkdir(directory, { recursive: true });
      const name = `${mail.createdAt.replace(/[:.]/g, '-')}_${mail.kind}_${mail.id}.eml`;
      const file = path.join(directory, name);
      // Written aside then renamed, so a reader never sees half a message.
      await writeFile(`${file}.tmp`, info.message as Buffer);
      await rename(`${file}.tmp`, file);
    },
    close: transporter.close,
  };
}

export function createMailTransport(config: Pick<Config, 'smtpUrl' | 'dataDir' | 'mail'>): MailTransport {
  return config.smtpUrl ? smtpTransport(config.smtpUrl, config.mail.concurrency) : emlTransport(config.dataDir);
}
