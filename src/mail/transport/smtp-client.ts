import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { type ConnectionOptions, connect as connectTls, type TLSSocket } from 'node:tls';
import { parseSmtpUrl, type SmtpServerAddress } from '../../domain/network/smtp-url.js';

export { parseSmtpUrl, type SmtpServerAddress, SmtpUrlError } from '../../domain/network/smtp-url.js';

/**
 * A pooled SMTP client: up to `poolSize` connections, opened when a send needs one, each sending
 * one message at a time, with a FIFO of sends waiting for a connection. A message costs two
 * writes and two reads: `MAIL FROM`, `RCPT TO` and `DATA` in one write when the server offers
 * PIPELINING (RFC 2920), then the dot-stuffed body with its terminating `.` in another; while
 * sends are waiting, the next one's envelope goes in the body's write, so each costs one. Every
 * socket has Nagle's algorithm off (`noDelay`, which TLS keeps: it wraps the same TCP handle).
 * nodemailer left it on and wrote a message in many small writes, so each one waited ~40 ms for
 * the server's delayed ACK (45 ms a mail on a kept connection); with one write a step it no longer
 * shows, and it stays off so a write split by TLS records or the kernel never waits either.
 *
 * Errors carry nodemailer's fields (`code`, `responseCode`, `response`), which mail/errors.ts
 * reads to tell a permanent rejection from an outage. A message is never sent twice by the pool:
 * a connection lost once the message was written fails the send, and the outbox worker's retry
 * decides. Only a kept connection found closed before the message was written (the server closed
 * it while idle, or answers 421: it took nothing), or one lost while a send's envelope had gone
 * ahead of its body, hands the send to another connection.
 */

export type SmtpErrorCode = 'ECONNECTION' | 'ETIMEDOUT' | 'EAUTH' | 'ETLS' | 'EPROTOCOL' | 'EENVELOPE' | 'EMESSAGE';

export class SmtpError extends Error {
  override readonly name = 'SmtpError';
  /** The server's reply code, when a reply caused the error. */
  readonly responseCode: number | undefined;

  constructor(
    readonly code: SmtpErrorCode,
    message: string,
    /** The server's reply, every line (joined with \n), when a reply caused the error. */
    readonly response?: string,
    options?: { cause?: unknown },
  ) {
    super(response === undefined ? message : `${message}: ${response}`, options);
    this.responseCode = response === undefined ? undefined : Number(response.slice(0, 3));
  }
}

export interface SmtpPoolOptions {
  /** SMTP_URL. */
  url: string;
  /** Merged into every TLS connection's options (tests pass the `ca` of their own certificate). */
  tls?: ConnectionOptions;
  /** Connections at most (MAIL_CONCURRENCY). */
  poolSize?: number;
  /** A connection says QUIT after this many messages and a new one is opened. */
  maxMessages?: number;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  /** Inactivity on a connection in use fails its send; an idle connection is closed after it. */
  socketTimeoutMs?: number;
  /** The EHLO name: the machine's host name when it is a full domain name, else `[127.0.0.1]`. */
  clientName?: string;
}

export interface SmtpEnvelope {
  from: string;
  to: readonly string[];
}

/**
 * 1,000 messages a connection. A new connection (TCP handshake, greeting, EHLO, often STARTTLS
 * and AUTH) cost ~0.8 ms of CPU here, ~3.5 ms with STARTTLS: 8 or 35 µs a mail at 100 messages
 * (nodemailer's figure), 1 or 4 µs at 1,000. Exim closes at 1,000 by default
 * (`smtp_accept_max_per_connection`); a server that stops earlier answers 421 to the next MAIL
 * FROM, and that send goes on over a new connection (see the class comment).
 */
export const MAX_MESSAGES_PER_CONNECTION = 1000;

const DEFAULTS = { poolSize: 1, maxMessages: MAX_MESSAGES_PER_CONNECTION, connectionTimeoutMs: 10_000, greetingTimeoutMs: 10_000, socketTimeoutMs: 30_000 };
/** A reply line longer than this (or a reply of more lines) is not SMTP. */
const REPLY_LINE_MAX = 4096;
const REPLY_LINES_MAX = 256;
const HOST_NAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/i;

/** The EHLO name (RFC 5321 4.1.4: a fully qualified domain name, or an address literal). */
export function defaultClientName(name = safeHostname()): string {
  return HOST_NAME.test(name) ? name : '[127.0.0.1]';
}

function safeHostname(): string {
  try {
    return hostname();
  } catch {
    return '';
  }
}

/** An address as it may appear between `<` and `>` in MAIL FROM / RCPT TO: no space, control or bracket. */
function envelopeAddress(address: string): string {
  if (!/^[\x21-\x3b\x3d\x3f-\x7e]+$/.test(address))
    throw new SmtpError('EENVELOPE', 'an envelope address has a space, a control character or an angle bracket');
  return address;
}

const DOT = 0x2e;
const CR = 0x0d;
const LF = 0x0a;
const TERMINATOR = Buffer.from('.\r\n', 'latin1');

/**
 * The DATA block: every line break as CRLF, every line that starts with "." given another
 * (RFC 5321 4.5.2), a final CRLF when missing, and the terminating `.` line; one buffer, one
 * write. A message that needs no change (ours: mime.ts writes CRLF, and the check is a few native
 * searches) is copied once; any other is rewritten a byte at a time.
 */
export function dataBlock(message: Uint8Array): Buffer {
  const source = Buffer.from(message.buffer, message.byteOffset, message.length);
  const length = source.length;
  const tail = length === 0 || endsWithLineBreak(source) ? 0 : 2;
  if (isSmtpReady(source)) {
    const out = Buffer.allocUnsafe(length + tail + TERMINATOR.length);
    source.copy(out, 0);
    if (tail > 0) out.write('\r\n', length, 'latin1');
    TERMINATOR.copy(out, length + tail);
    return out;
  }
  // Rewritten: at most 3 bytes out per byte in (a lone LF before a dot: CR LF dot dot).
  const out = Buffer.allocUnsafe(length * 3 + tail + TERMINATOR.length);
  let at = 0;
  let lineStart = true;
  for (let i = 0; i < length; i += 1) {
    const byte = source[i] as number;
    if (lineStart && byte === DOT) out[at++] = DOT;
    if (byte === LF) {
      if (i === 0 || source[i - 1] !== CR) out[at++] = CR;
      out[at++] = LF;
      lineStart = true;
    } else if (byte === CR && source[i + 1] !== LF) {
      out[at++] = CR;
      out[at++] = LF;
      lineStart = true;
    } else {
      out[at++] = byte;
      lineStart = false;
    }
  }
  if (tail > 0) at += out.write('\r\n', at, 'latin1');
  at += TERMINATOR.copy(out, at);
  return out.subarray(0, at);
}

/** True when every line break is CRLF and no line starts with a dot. */
function isSmtpReady(source: Buffer): boolean {
  if (source[0] === DOT) return false;
  let breaks = 0;
  for (let lf = source.indexOf(LF); lf >= 0; lf = source.indexOf(LF, lf + 1)) {
    if (source[lf - 1] !== CR || source[lf + 1] === DOT) return false;
    breaks += 1;
  }
  // Every LF follows a CR: as many CRs as LFs means no lone CR.
  let returns = 0;
  for (let cr = source.indexOf(CR); cr >= 0; cr = source.indexOf(CR, cr + 1)) returns += 1;
  return returns === breaks;
}

/** After normalisation the message ends with a line break: it ends with LF or a lone CR. */
function endsWithLineBreak(message: Uint8Array): boolean {
  const last = message[message.length - 1];
  return last === LF || last === CR;
}

/** A connection's part of the pool options, defaults filled in. */
interface ConnectionSettings {
  poolSize: number;
  maxMessages: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  clientName: string;
  tls: ConnectionOptions | undefined;
}

interface Reply {
  code: number;
  /** Every line as received, joined with \n. */
  text: string;
}

type Waiter = { resolve: (reply: Reply) => void; reject: (error: SmtpError) => void };

/** What the server offers after EHLO. */
interface Extensions {
  pipelining: boolean;
  startTls: boolean;
  size: boolean;
  auth: Set<string>;
}

const NO_EXTENSIONS: Extensions = { pipelining: false, startTls: false, size: false, auth: new Set() };

function parseEhlo(text: string): Extensions {
  const lines = text.split('\n').slice(1);
  const extensions: Extensions = { pipelining: false, startTls: false, size: false, auth: new Set() };
  for (const line of lines) {
    const [keyword = '', ...params] = line
      .slice(4)
      .trim()
      .toUpperCase()
      .split(/[\s=]+/);
    if (keyword === 'PIPELINING') extensions.pipelining = true;
    else if (keyword === 'STARTTLS') extensions.startTls = true;
    else if (keyword === 'SIZE') extensions.size = true;
    else if (keyword === 'AUTH') for (const mechanism of params) extensions.auth.add(mechanism);
  }
  return extensions;
}

/** One SMTP session: opened, then one transaction at a time. */
class SmtpConnection {
  /** Messages sent. */
  messages = 0;
  /** True once it has waited in the pool: the server may have closed it meanwhile. */
  kept = false;
  /**
   * After a failed send: true when it failed on the connection (lost, or a 421) before the
   * message was written, so it can go over another connection without any risk of a second copy.
   */
  tookNothing = false;
  /** Set once the connection can take no more commands. */
  failure: SmtpError | undefined;
  /** Called once when the connection ends or fails while no transaction runs. */
  onIdleEnd: (() => void) | undefined;
  private socket: Socket | TLSSocket;
  private secure: boolean;
  private extensions = NO_EXTENSIONS;
  private pending = '';
  private lines: string[] = [];
  private readonly replies: Reply[] = [];
  private waiter: Waiter | undefined;
  /** Rejects the step of open() under way (a timeout, the connection lost). */
  private abortOpen: ((error: SmtpError) => void) | undefined;
  private busy = true;
  /** True once the running transaction has written its message. */
  private bodySent = false;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onClose = () => this.fail(new SmtpError(this.upgrading ? 'ETLS' : 'ECONNECTION', 'Connection closed unexpectedly'));
  private readonly onError = (error: Error) =>
    this.fail(this.upgrading ? tlsError(error) : new SmtpError('ECONNECTION', error.message || 'Connection error', undefined, { cause: error }));
  private readonly onTimeout = () => (this.busy ? this.fail(new SmtpError('ETIMEDOUT', 'Timeout')) : this.quit());
  private upgrading = false;

  constructor(
    private readonly server: SmtpServerAddress,
    private readonly options: ConnectionSettings,
  ) {
    this.secure = server.secure;
    this.socket = connectTcp({ host: server.host, port: server.port, noDelay: true });
    this.listen(this.socket);
  }

  /** Connects, reads the greeting, says EHLO, upgrades with STARTTLS and logs in. */
  async open(): Promise<void> {
    // Whatever ends the connection meanwhile (an error, a close, a timeout) rejects this at once.
    const aborted = new Promise<never>((_, reject) => {
      this.abortOpen = reject;
    });
    try {
      await Promise.race([this.handshake(), aborted]);
    } finally {
      this.abortOpen = undefined;
    }
  }

  private async handshake(): Promise<void> {
    const { connectionTimeoutMs, greetingTimeoutMs, socketTimeoutMs } = this.options;
    await this.within(connectionTimeoutMs, 'Connection timeout', async () => {
      await new Promise<void>((resolve) => this.socket.once('connect', () => resolve()));
      if (this.secure) await this.startTls();
    });
    const greeting = await this.within(greetingTimeoutMs, 'Greeting never received', () => this.read());
    if (greeting.code !== 220) throw new SmtpError('ECONNECTION', 'The server refused the connection', greeting.text);
    this.socket.setTimeout(socketTimeoutMs);
    await this.hello();
    if (!this.secure && this.extensions.startTls) {
      const reply = await this.command('STARTTLS');
      if (reply.code !== 220) throw new SmtpError('ETLS', 'STARTTLS refused', reply.text);
      await this.startTls();
      await this.hello();
    }
    if (this.server.user !== undefined) await this.login(this.server.user, this.server.password ?? '');
  }

  /**
   * One message; rejects with an SmtpError, `tookNothing` set. `ahead`: its envelope already went
   * behind the previous message's body. `follow` is asked, as the body is written, for the message
   * to send next on this connection: its envelope goes in the same write (RFC 2920 lets a group
   * start with a message's content), so a message costs one write and one read instead of two.
   */
  async send(envelope: SmtpEnvelope, data: Buffer, ahead = false, follow?: () => Outgoing | undefined): Promise<void> {
    this.busy = true;
    this.bodySent = false;
    this.tookNothing = false;
    try {
      await this.transaction(envelope, data, ahead, follow);
    } catch (error) {
      // Before the body the server holds no message; a lost connection or a 421 says nothing of this one.
      this.tookNothing = !this.bodySent && error instanceof SmtpError && (error.code === 'ECONNECTION' || error.responseCode === 421);
      throw error;
    }
  }

  /** A message's envelope commands, `DATA` last. */
  private envelopeCommands(envelope: SmtpEnvelope, data: Buffer): string[] {
    // RFC 1870: the message's size (without the terminating dot line), so an oversized one is refused at MAIL FROM.
    const size = this.extensions.size ? ` SIZE=${data.length - TERMINATOR.length}` : '';
    return [`MAIL FROM:<${envelope.from}>${size}`, ...envelope.to.map((to) => `RCPT TO:<${to}>`), 'DATA'];
  }

  private async transaction(envelope: SmtpEnvelope, data: Buffer, ahead: boolean, follow: (() => Outgoing | undefined) | undefined): Promise<void> {
    const commands = this.envelopeCommands(envelope, data);
    let refused: SmtpError | undefined;
    let dataReply: Reply | undefined;
    if (this.extensions.pipelining) {
      if (!ahead) this.write(`${commands.join('\r\n')}\r\n`);
      for (let i = 0; i < commands.length; i += 1) {
        let reply: Reply;
        try {
          reply = await this.read();
        } catch (error) {
          // The server may hang up right after refusing MAIL FROM (a 421): its reason is the answer.
          throw refused ?? error;
        }
        if (i === commands.length - 1) dataReply = reply;
        else refused ??= envelopeRefusal(i === 0, reply);
      }
    } else {
      for (let i = 0; i < commands.length - 1 && refused === undefined; i += 1) {
        refused = envelopeRefusal(i === 0, await this.command(commands[i] as string));
      }
      if (refused === undefined) dataReply = await this.command('DATA');
    }
    if (refused !== undefined) {
      // DATA accepted anyway (another recipient was): only closing the connection cancels it.
      if (dataReply?.code === 354) this.destroy(refused);
      throw refused;
    }
    if (dataReply === undefined || dataReply.code !== 354) throw new SmtpError('EMESSAGE', 'DATA command failed', dataReply?.text);
    this.bodySent = true;
    // The next message's envelope behind this body, if this connection may send one more.
    const next = this.extensions.pipelining && this.messages + 1 < this.options.maxMessages ? follow?.() : undefined;
    if (next) this.write(data, `${this.envelopeCommands(next.envelope, next.data).join('\r\n')}\r\n`);
    else this.write(data);
    const done = await this.read();
    if (done.code !== 250) throw new SmtpError('EMESSAGE', 'Message refused', done.text);
    this.messages += 1;
  }

  /** After a failed transaction: RSET, so the connection can take the next one. */
  async reset(): Promise<void> {
    const reply = await this.command('RSET');
    if (reply.code !== 250) throw new SmtpError('EPROTOCOL', 'RSET failed', reply.text);
  }

  /** Back in the pool: from now on an end or a reply out of turn retires it. */
  idle(): void {
    this.busy = false;
    this.kept = true;
    if (this.failure || this.replies.length > 0) this.idleEnded();
  }

  /** Says QUIT and closes; gives up after a second if the server does not close. */
  quit(): void {
    if (this.failure) return;
    this.failure = new SmtpError('ECONNECTION', 'Connection closed');
    if (!this.busy) this.idleEnded();
    const socket = this.socket;
    socket.write('QUIT\r\n');
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
  }

  destroy(error: SmtpError): void {
    if (!this.failure) this.failure = error;
    this.socket.destroy();
  }

  private async hello(): Promise<void> {
    const name = this.options.clientName;
    const ehlo = await this.command(`EHLO ${name}`);
    if (ehlo.code === 421) throw new SmtpError('ECONNECTION', 'The server closed the session', ehlo.text);
    if (ehlo.code >= 200 && ehlo.code < 300) {
      this.extensions = parseEhlo(ehlo.text);
      return;
    }
    const helo = await this.command(`HELO ${name}`);
    if (helo.code < 200 || helo.code >= 300) throw new SmtpError('EPROTOCOL', 'EHLO and HELO refused', helo.text);
    this.extensions = NO_EXTENSIONS;
  }

  /** AUTH PLAIN when offered, else AUTH LOGIN. The password goes in no message. */
  private async login(user: string, password: string): Promise<void> {
    const auth = this.extensions.auth;
    const base64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
    let reply: Reply;
    if (auth.has('PLAIN')) {
      reply = await this.command(`AUTH PLAIN ${base64(`\u0000${user}\u0000${password}`)}`);
    } else if (auth.has('LOGIN')) {
      reply = await this.command('AUTH LOGIN');
      if (reply.code === 334) reply = await this.command(base64(user));
      if (reply.code === 334) reply = await this.command(base64(password));
    } else {
      throw new SmtpError('EAUTH', 'The server offers neither AUTH PLAIN nor AUTH LOGIN');
    }
    if (reply.code !== 235) throw new SmtpError('EAUTH', 'Authentication failed', reply.text);
  }

  /**
   * Wraps the socket in TLS (smtps: at once; smtp: after STARTTLS), the certificate verified
   * against the host name. A failed handshake ends the connection with ETLS (onError).
   */
  private startTls(): Promise<void> {
    const plain = this.socket;
    plain.off('data', this.onData);
    plain.off('close', this.onClose);
    plain.off('timeout', this.onTimeout);
    plain.setTimeout(0);
    this.pending = '';
    this.upgrading = true;
    const host = this.server.host;
    const tls = connectTls({
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...this.options.tls,
      socket: plain,
      host,
    });
    this.socket = tls;
    this.listen(tls);
    // A handshake that stalls after STARTTLS ends at the socket timeout (smtps: at the connection timeout, sooner).
    tls.setTimeout(this.options.socketTimeoutMs);
    return new Promise<void>((resolve) => {
      tls.once('secureConnect', () => {
        this.upgrading = false;
        this.secure = true;
        resolve();
      });
    });
  }

  private listen(socket: Socket): void {
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
  }

  /** Runs a step of open() that fails the connection when it takes longer than `ms`. */
  private async within<T>(ms: number, what: string, step: () => Promise<T>): Promise<T> {
    const timer = setTimeout(() => this.fail(new SmtpError('ETIMEDOUT', what)), ms);
    try {
      return await step();
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes `data`, and `then` behind it in the same system call (corked: one writev, no copy). */
  private write(data: string | Buffer, then?: string): void {
    if (this.failure) throw this.failure;
    if (then === undefined) {
      this.socket.write(data);
      return;
    }
    this.socket.cork();
    this.socket.write(data);
    this.socket.write(then);
    this.socket.uncork();
  }

  private command(line: string): Promise<Reply> {
    this.write(`${line}\r\n`);
    return this.read();
  }

  private read(): Promise<Reply> {
    const reply = this.replies.shift();
    if (reply) return Promise.resolve(reply);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<Reply>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private received(chunk: Buffer): void {
    this.pending += chunk.toString('latin1');
    let end = this.pending.indexOf('\n');
    while (end >= 0) {
      const line = this.pending.charCodeAt(end - 1) === CR ? this.pending.slice(0, end - 1) : this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 1);
      this.line(line);
      if (this.failure) return;
      end = this.pending.indexOf('\n');
    }
    if (this.pending.length > REPLY_LINE_MAX) this.fail(new SmtpError('EPROTOCOL', 'Reply line too long'));
  }

  private line(line: string): void {
    const code = replyCode(line);
    const separator = line.charAt(3);
    if (code === undefined || (separator !== '' && separator !== ' ' && separator !== '-')) {
      this.fail(new SmtpError('EPROTOCOL', 'Unexpected reply', line.slice(0, 200)));
      return;
    }
    this.lines.push(line);
    if (separator === '-') {
      if (this.lines.length > REPLY_LINES_MAX) this.fail(new SmtpError('EPROTOCOL', 'Reply too long'));
      return;
    }
    const reply = { code, text: this.lines.join('\n') };
    this.lines = [];
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter.resolve(reply);
    } else {
      this.replies.push(reply);
      // A reply nobody asked for while idle: the server is closing the session (421 timeout).
      if (!this.busy) this.quit();
    }
  }

  private fail(error: SmtpError): void {
    if (!this.failure) this.failure = error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
    this.abortOpen?.(error);
    if (!this.socket.destroyed) this.socket.destroy();
    if (!this.busy) this.idleEnded();
  }

  private idleEnded(): void {
    const callback = this.onIdleEnd;
    this.onIdleEnd = undefined;
    callback?.();
  }
}

/** The reply code a line starts with (2xx to 5xx), without a regular expression: it runs for every line. */
function replyCode(line: string): number | undefined {
  const a = line.charCodeAt(0) - 48;
  const b = line.charCodeAt(1) - 48;
  const c = line.charCodeAt(2) - 48;
  return a >= 2 && a <= 5 && b >= 0 && b <= 9 && c >= 0 && c <= 9 ? a * 100 + b * 10 + c : undefined;
}

function envelopeRefusal(isMailFrom: boolean, reply: Reply): SmtpError | undefined {
  if (reply.code >= 200 && reply.code < 300) return undefined;
  return new SmtpError('EENVELOPE', isMailFrom ? 'Sender refused' : 'Recipient refused', reply.text);
}

function tlsError(error: Error): SmtpError {
  return new SmtpError('ETLS', `TLS failed: ${error.message}`, undefined, { cause: error });
}

/** A message ready for the wire: its envelope and its DATA block (dataBlock). */
interface Outgoing {
  envelope: SmtpEnvelope;
  data: Buffer;
}

interface Job extends Outgoing {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Times handed to another connection because a kept one was found closed. */
  handedOn: number;
}

export class SmtpPool {
  private readonly server: SmtpServerAddress;
  private readonly settings: ConnectionSettings;
  private readonly queue: Job[] = [];
  private readonly idle: SmtpConnection[] = [];
  private readonly connections = new Set<SmtpConnection>();
  private opening = 0;
  private closed = false;

  constructor(options: SmtpPoolOptions) {
    this.server = parseSmtpUrl(options.url);
    const clientName = options.clientName ?? defaultClientName();
    if (!/^[\x21-\x7e]+$/.test(clientName)) throw new TypeError('clientName must be one word of printable ASCII');
    this.settings = {
      poolSize: Math.max(1, options.poolSize ?? DEFAULTS.poolSize),
      maxMessages: Math.max(1, options.maxMessages ?? DEFAULTS.maxMessages),
      connectionTimeoutMs: options.connectionTimeoutMs ?? DEFAULTS.connectionTimeoutMs,
      greetingTimeoutMs: options.greetingTimeoutMs ?? DEFAULTS.greetingTimeoutMs,
      socketTimeoutMs: options.socketTimeoutMs ?? DEFAULTS.socketTimeoutMs,
      clientName,
      tls: options.tls,
    };
  }

  /** Connections open or opening now. */
  get size(): number {
    return this.connections.size;
  }

  /** Sends one message (any line endings; dot-stuffed here). Resolves when the server accepted it. */
  send(envelope: SmtpEnvelope, message: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new SmtpError('ECONNECTION', 'The SMTP pool is closed'));
    try {
      envelopeAddress(envelope.from);
      if (envelope.to.length === 0) throw new SmtpError('EENVELOPE', 'No recipients');
      for (const to of envelope.to) envelopeAddress(to);
    } catch (error) {
      return Promise.reject(error);
    }
    const data = dataBlock(message);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ envelope, data, resolve, reject, handedOn: 0 });
      this.pump();
    });
  }

  /** Ends every connection (QUIT) once its send is done, and fails the sends still waiting. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new SmtpError('ECONNECTION', 'The SMTP pool was closed before this message was sent'));
    for (const connection of this.idle.splice(0)) connection.quit();
  }

  /**
   * Hands waiting sends to idle connections, the most recently used first (so connections the
   * load no longer needs stay idle and close at the socket timeout), then opens new ones up to
   * poolSize, no more than there are sends waiting for one.
   */
  private pump(): void {
    while (this.queue.length > 0) {
      const connection = this.idle.pop();
      if (connection) {
        this.run(connection, this.queue.shift() as Job);
      } else if (this.connections.size < this.settings.poolSize && this.opening < this.queue.length) {
        this.open();
      } else {
        return;
      }
    }
  }

  private open(): void {
    const connection = new SmtpConnection(this.server, this.settings);
    this.connections.add(connection);
    this.opening += 1;
    connection.open().then(
      () => {
        this.opening -= 1;
        const job = this.queue.shift();
        if (job) this.run(connection, job);
        else this.release(connection);
      },
      (error: unknown) => {
        this.opening -= 1;
        connection.destroy(error instanceof SmtpError ? error : new SmtpError('ECONNECTION', String(error)));
        this.connections.delete(connection);
        // The send this connection was opened for fails with the reason; the others try again.
        this.queue.shift()?.reject(error);
        this.pump();
      },
    );
  }

  /**
   * Sends `job` over `connection`, then the send that followed it on the connection (its envelope
   * written behind this body: `ahead`), if one did, and so on while sends are waiting; else the
   * connection goes back to the pool.
   */
  private run(connection: SmtpConnection, job: Job, ahead = false): void {
    let next: Job | undefined;
    // Only a send nobody else could take: every other connection is busy, or it would have.
    const follow = () => {
      next = this.closed ? undefined : this.queue.shift();
      return next;
    };
    connection.send(job.envelope, job.data, ahead, follow).then(
      () => {
        job.resolve();
        if (next) this.run(connection, next, true);
        else this.release(connection);
      },
      (error: unknown) => {
        // A kept connection the server had closed (or closes now, 421), or one lost while this
        // send's envelope went ahead of its body: the server took nothing, so the message goes
        // over another connection. Bounded: each try retires a connection.
        if ((connection.kept || ahead) && connection.tookNothing && this.handOn(job)) connection.destroy(error as SmtpError);
        else job.reject(error);
        if (next) {
          // The follower's envelope went behind this body. Whatever the server answered this
          // message, its transaction has ended: on a live connection the follower goes on (its
          // envelope replies are on their way; an RSET now would cancel it). On a lost one the
          // server took nothing of it.
          if (!connection.failure) {
            this.run(connection, next, true);
            return;
          }
          if (!this.handOn(next)) next.reject(connection.failure);
        }
        if (connection.failure) {
          this.drop(connection);
        } else {
          connection.reset().then(
            () => this.release(connection),
            (resetError: unknown) => {
              connection.destroy(resetError instanceof SmtpError ? resetError : new SmtpError('EPROTOCOL', String(resetError)));
              this.drop(connection);
            },
          );
        }
      },
    );
  }

  /**
   * A send the server took nothing of, back at the front of the queue for another connection;
   * false once it has been handed on poolSize times (each try retired a connection).
   */
  private handOn(job: Job): boolean {
    if (job.handedOn >= this.settings.poolSize) return false;
    job.handedOn += 1;
    this.queue.unshift(job);
    return true;
  }

  /** A connection done with its send: back to the idle list, or QUIT when it has sent its share. */
  private release(connection: SmtpConnection): void {
    if (this.closed || connection.messages >= this.settings.maxMessages || connection.failure) {
      connection.quit();
      this.drop(connection);
      return;
    }
    connection.onIdleEnd = () => {
      const at = this.idle.indexOf(connection);
      if (at >= 0) this.idle.splice(at, 1);
      this.drop(connection);
    };
    this.idle.push(connection);
    connection.idle();
    this.pump();
  }

  private drop(connection: SmtpConnection): void {
    this.connections.delete(connection);
    this.pump();
  }
}
