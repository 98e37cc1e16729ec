import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { afterEach } from 'vitest';
import type { OutgoingMail } from '../src/mail/transport/mime.js';
import { SmtpPool, type SmtpPoolOptions } from '../src/mail/transport/smtp-client.js';
import { type ParsedMail, parseMail } from './support/smtp.js';

/** Helpers of the SMTP client suites (test/mail.smtp-client.*.test.ts, test/mail.mime.*.test.ts). */

export interface ServerMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /** The session was over TLS (implicit or STARTTLS). */
  secure: boolean;
  /** The user the session logged in as. */
  user: string | undefined;
  /** The name the client gave in EHLO/HELO. */
  clientName: string;
}

export interface RealServer {
  port: number;
  /** `smtp://127.0.0.1:<port>` (or smtps: for a secure server). */
  url: string;
  received: ServerMail[];
  /** Connections accepted so far. */
  connections: number;
  /** Sessions open now, and the most ever open at once. */
  open: number;
  maxOpen: number;
  server: SMTPServer;
  close(): Promise<void>;
}

/** Runs on every message before it is kept; throwing (an Error with `responseCode`) refuses it. */
export type MessageHook = (raw: Buffer, session: SMTPServerSession) => Promise<void> | void;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The same message, whatever random boundary each copy was composed with. */
export function withoutBoundaries(message: Buffer): string {
  return message.toString('latin1').replace(/=_hts_[0-9a-f]{32}/g, '=_hts_');
}

/** An error smtp-server answers with the given reply code. */
export function smtpReply(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

/**
 * A real smtp-server on loopback that keeps every message (raw and parsed with mailparser) and
 * counts connections. `options` are merged over a plain server (no STARTTLS, no AUTH); its
 * onConnect and onClose run after the counting ones.
 */
export async function startRealServer(options: Omit<SMTPServerOptions, 'onData'> = {}, onMessage?: MessageHook): Promise<RealServer> {
  const state = { connections: 0, open: 0, maxOpen: 0 };
  const received: ServerMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    disableReverseLookup: true,
    ...options,
    onConnect(session, callback) {
      state.connections += 1;
      state.open += 1;
      state.maxOpen = Math.max(state.maxOpen, state.open);
      if (options.onConnect) return options.onConnect(session, callback);
      return callback();
    },
    onClose(session, callback) {
      state.open -= 1;
      if (options.onClose) return options.onClose(session, callback);
      return callback();
    },
    onData(stream, session, callback) {
      void (async () => {
        const raw = await readAll(stream);
        await onMessage?.(raw, session);
        received.push({
          envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
          raw,
          parsed: await parseMail(raw),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
          clientName: String(session.hostNameAppearsAs),
        });
        callback();
      })().catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
    },
  });
  server.on('error', () => undefined);
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  return {
    port,
    url: `${options.secure ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    received,
    get connections() {
      return state.connections;
    },
    get open() {
      return state.open;
    },
    get maxOpen() {
      return state.maxOpen;
    },
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A scripted SMTP server for the SMTP client's suites: it answers like a plain server unless a
 * test's `reply` hook says otherwise, and records what the client wrote, chunk by chunk, so a
 * test can see which commands went in one write, and behaviour smtp-server cannot be made to show
 * (a hang-up at a chosen command, a malformed or multi-line reply, no greeting at all).
 */

export interface ScriptedSession {
  /** 1 for the first connection. */
  id: number;
  socket: Socket;
  /** Every `data` chunk the client sent, as latin1 text. */
  chunks: string[];
  /** Every command line (not the message), in order. */
  commands: string[];
  /** Messages accepted in this session. */
  messages: string[];
}

/** What to answer: a reply (CRLF added per line), `close` (hang up), `hang` (say nothing), or undefined for the default. */
export type ScriptedAnswer = string | 'close' | 'hang' | undefined;

export interface ScriptedOptions {
  /** The greeting; null sends none. */
  greeting?: string | null;
  /** EHLO keywords after the first line. */
  extensions?: string[];
  /** Answer to a command line before the default. */
  reply?: (command: string, session: ScriptedSession) => ScriptedAnswer;
  /** Answer to a message once its terminating dot arrived (default 250). */
  message?: (body: string, session: ScriptedSession) => ScriptedAnswer;
  /** Called on every data chunk while a message is being received. */
  onBodyChunk?: (chunk: string, session: ScriptedSession) => void;
}

export interface ScriptedServer {
  port: number;
  url: string;
  sessions: ScriptedSession[];
  /** Every message accepted, across sessions. */
  messages: string[];
  close(): Promise<void>;
}

export async function startScriptedServer(options: ScriptedOptions = {}): Promise<ScriptedServer> {
  const sessions: ScriptedSession[] = [];
  const messages: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: ScriptedSession = { id: sessions.length + 1, socket, chunks: [], commands: [], messages: [] };
    sessions.push(session);
    let buffer = '';
    let inData = false;
    const answer = (text: ScriptedAnswer, fallback: string) => {
      const value = text ?? fallback;
      if (value === 'hang') return;
      if (value === 'close') {
        socket.destroy();
        return;
      }
      socket.write(`${value.split('\n').join('\r\n')}\r\n`);
    };
    const greeting = options.greeting === undefined ? '220 scripted.test ESMTP' : options.greeting;
    if (greeting !== null) socket.write(`${greeting}\r\n`);
    socket.on('data', (data: Buffer) => {
      const chunk = data.toString('latin1');
      session.chunks.push(chunk);
      buffer += chunk;
      for (;;) {
        if (inData) {
          options.onBodyChunk?.(chunk, session);
          if (socket.destroyed) return;
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          const body = buffer.slice(0, end + 2);
          buffer = buffer.slice(end + 5);
          inData = false;
          session.messages.push(body);
          messages.push(body);
          answer(options.message?.(body, session), '250 2.0.0 accepted');
          continue;
        }
        const end = buffer.indexOf('\r\n');
        if (end < 0) return;
        const command = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        session.commands.push(command);
        const verb = command.split(' ')[0]?.toUpperCase() ?? '';
        const custom = options.reply?.(command, session);
        if (custom !== undefined) {
          answer(custom, '');
          if (custom === 'close' || socket.destroyed) return;
          continue;
        }
        if (verb === 'EHLO') {
          const lines = ['scripted.test', ...(options.extensions ?? ['PIPELINING', 'SIZE 10485760'])];
          answer(undefined, lines.map((line, i) => `250${i === lines.length - 1 ? ' ' : '-'}${line}`).join('\n'));
        } else if (verb === 'DATA') {
          inData = true;
          answer(undefined, '354 go ahead');
        } else if (verb === 'QUIT') {
          answer(undefined, '221 bye');
          socket.end();
          return;
        } else answer(undefined, verb === 'HELO' ? '250 scripted.test' : '250 OK');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    sessions,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface TestCertificate {
  key: string;
  cert: string;
}

/** A throwaway self-signed certificate (openssl, EC P-256) for the given subject alternative names. */
export function selfSignedCertificate(altNames = 'IP:127.0.0.1,DNS:localhost'): TestCertificate {
  const directory = mkdtempSync(path.join(tmpdir(), 'hts-cert-'));
  try {
    const key = path.join(directory, 'key.pem');
    const cert = path.join(directory, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=hts test',
        '-addext',
        `subjectAltName=${altNames}`,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * The servers and pools of one suite, each made through these and closed after every test:
 * `real` (smtp-server), `scripted` (startScriptedServer) and `pool`.
 */
export function useSmtpFixtures(): {
  real: (...args: Parameters<typeof startRealServer>) => Promise<RealServer>;
  scripted: (...args: Parameters<typeof startScriptedServer>) => Promise<ScriptedServer>;
  pool: (url: string, options?: Partial<SmtpPoolOptions>) => SmtpPool;
  /** Any other server to close after the test. */
  track: (server: { close(): Promise<void> }) => void;
} {
  const servers: { close(): Promise<void> }[] = [];
  const pools: SmtpPool[] = [];
  afterEach(async () => {
    for (const pool of pools.splice(0)) pool.close();
    for (const server of servers.splice(0)) await server.close();
  });
  return {
    real: async (...args) => {
      const server = await startRealServer(...args);
      servers.push(server);
      return server;
    },
    scripted: async (...args) => {
      const server = await startScriptedServer(...args);
      servers.push(server);
      return server;
    },
    pool: (url, options = {}) => {
      const created = new SmtpPool({ url, ...options });
      pools.push(created);
      return created;
    },
    track: (server) => void servers.push(server),
  };
}

/** A mail as the outbox worker hands it to a transport: a notification to the operator, with `overrides`. */
export function outgoingMail(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    id: `mail-${randomBytes(16).toString('hex')}`,
    kind: 'task_submitted',
    from: 'tasks@hitl.example-service.dev',
    to: 'operator@ops.example-service.dev',
    replyTo: null,
    subject: 'New task real_world_verification: count the benches',
    text: 'A new task was submitted.\nOpen it in the console.\n',
    html: '<p>A new task was submitted.</p>',
    createdAt: '2030-03-10T10:00:00.000Z',
    ...overrides,
  };
}
