import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { enqueueTaskTransition } from '../../src/mail/outbox.js';
import type { TasksTable } from '../../src/store/schema.js';
import { findTask, type TaskRow } from '../../src/store/tasks/tasks-repo.js';
import type { TestApp } from './app.js';

/**
 * A real SMTP server on loopback for the mail suites: collects every message it accepts, parsed
 * with mailparser, together with the SMTP envelope and the raw header lines (so a test can prove
 * no header or recipient was injected). `setMode` simulates outages:
 *
 * - `accept`   — normal operation
 * - `down`     — nothing listens on the port (connection refused)
 * - `tempfail` — answers `421` at connect (a 4xx outage: the server is up but not taking mail)
 * - `reject`   — `550` for every recipient (a permanent 5xx rejection)
 */

export type SmtpMode = 'accept' | 'down' | 'tempfail' | 'reject';

interface AddressObject {
  value: { address?: string; name: string }[];
  text: string;
}

/** The part of mailparser's ParsedMail the suites read (mailparser ships no types). */
export interface ParsedMail {
  subject?: string;
  from?: AddressObject;
  to?: AddressObject | AddressObject[];
  cc?: AddressObject | AddressObject[];
  bcc?: AddressObject | AddressObject[];
  replyTo?: AddressObject;
  text?: string;
  html?: string | false;
  messageId?: string;
  headerLines: { key: string; line: string }[];
}

const require = createRequire(import.meta.url);
const { simpleParser } = require('mailparser') as { simpleParser: (source: Buffer | string) => Promise<ParsedMail> };

export function parseMail(source: Buffer | string): Promise<ParsedMail> {
  return simpleParser(source);
}

export interface ReceivedMail {
  /** SMTP envelope: MAIL FROM and every RCPT TO. */
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /** Header names as received, lower case, in order (folded lines joined). */
  headerNames: string[];
  /** First address of To / Reply-To / From, for brevity in assertions. */
  to: string | undefined;
  replyTo: string | undefined;
  from: string | undefined;
  subject: string;
  text: string;
  html: string;
}

export interface TestSmtpServer {
  port: number;
  /** `smtp://127.0.0.1:<port>`, ready for SMTP_URL. */
  url: string;
  /** Every accepted message, in arrival order. */
  received: ReceivedMail[];
  /** Connection attempts seen (including refused ones while tempfail/reject). */
  connections: number;
  /** Messages whose DATA phase has begun (counted before they are read or delayed). */
  dataStarted: number;
  mode(): SmtpMode;
  setMode(mode: SmtpMode): Promise<void>;
  /** Delay before acknowledging DATA, to widen race windows. */
  setDataDelay(ms: number): void;
  /** Waits until `count` messages matching `match` (default: all) have arrived; returns them. */
  waitFor(count: number, match?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail[]>;
  clear(): void;
  close(): Promise<void>;
}

function firstAddress(value: AddressObject | AddressObject[] | undefined): string | undefined {
  const object = Array.isArray(value) ? value[0] : value;
  return object?.value[0]?.address;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The header names of a raw message, with folded continuation lines joined to their header. */
export function headerNamesOf(raw: Buffer | string): string[] {
  const text = raw.toString();
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? text : text.slice(0, end);
  return head
    .split(/\r?\n/)
    .filter((line) => line !== '' && !/^[ \t]/.test(line))
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let mode: SmtpMode = 'accept';
  let dataDelay = 0;
  let connections = 0;
  let dataStarted = 0;
  let port = 0;

  const create = () =>
    new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      size: 10 * 1024 * 1024,
      onConnect(_session: SMTPServerSession, callback) {
        connections += 1;
        if (mode === 'tempfail') return callback(smtpError('Service temporarily unavailable, try again later', 421));
        return callback();
      },
      // A 4xx outage also answers connections opened before it (the mail worker pools them).
      onMailFrom(_address, _session, callback) {
        if (mode === 'tempfail') return callback(smtpError('Service temporarily unavailable, try again later', 421));
        return callback();
      },
      onRcptTo(_address, _session, callback) {
        if (mode === 'reject') return callback(smtpError('Mailbox unavailable: no such user here', 550));
        return callback();
      },
      onData(stream, session, callback) {
        dataStarted += 1;
        void (async () => {
          const raw = await readAll(stream);
          const parsed = await simpleParser(raw);
          if (dataDelay > 0) await new Promise((resolve) => setTimeout(resolve, dataDelay));
          received.push({
            envelope: {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            },
            raw,
            parsed,
            headerNames: headerNamesOf(raw),
            to: firstAddress(parsed.to),
            replyTo: firstAddress(parsed.replyTo),
            from: firstAddress(parsed.from),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          callback();
        })().catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
      },
    });

  let server: SMTPServer | undefined = create();
  const listen = (s: SMTPServer, onPort: number) =>
    new Promise<number>((resolve, reject) => {
      s.once('error', reject);
      s.listen(onPort, '127.0.0.1', () => {
        const address = s.server.address();
        resolve(typeof address === 'object' && address ? address.port : onPort);
      });
    });
  const shut = (s: SMTPServer) => new Promise<void>((resolve) => s.close(() => resolve()));
  port = await listen(server, 0);

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    get connections() {
      return connections;
    },
    get dataStarted() {
      return dataStarted;
    },
    mode: () => mode,
    async setMode(next) {
      if (next === 'down' && server) {
        const old = server;
        server = undefined;
        await shut(old);
      } else if (next !== 'down' && !server) {
        server = create();
        await listen(server, port);
      }
      mode = next;
    },
    setDataDelay(ms) {
      dataDelay = ms;
    },
    async waitFor(count, match = () => true, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.filter(match);
        if (found.length >= count) return found;
        if (Date.now() > deadline) {
          throw new Error(`waited ${timeoutMs} ms for ${count} mail(s), got ${found.length} (of ${received.length} received)`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    clear() {
      received.length = 0;
    },
    async close() {
      if (server) await shut(server);
      server = undefined;
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false (real time; for background work). */
export async function waitUntil<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Moves a task the way the operator's transition code does, for suites that must not depend on
 * the admin PATCH endpoint: update the row and queue its mail in one transaction.
 */
export async function driveTransition(t: TestApp, taskId: string, changes: Partial<TasksTable> & { status: string }): Promise<TaskRow> {
  return t.store.db.transaction().execute(async (trx) => {
    const before = await findTask(trx, taskId);
    if (!before) throw new Error(`no task ${taskId}`);
    const at = t.clock.now().toISOString();
    const history = [...(JSON.parse(before.status_history) as unknown[]), { status: changes.status, at }];
    await trx
      .updateTable('tasks')
      .set({ ...changes, updated_at: at, status_history: JSON.stringify(history) })
      .where('id', '=', taskId)
      .execute();
    const row = await findTask(trx, taskId);
    if (!row) throw new Error(`no task ${taskId}`);
    await enqueueTaskTransition(trx, t.deps, row);
    return row;
  });
}
