import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { composeMail, mailEnvelope, type OutgoingMail } from '../src/mail/transport/mime.js';
import { dataBlock, defaultClientName, parseSmtpUrl, type SmtpPool } from '../src/mail/transport/smtp-client.js';
import { createMailTransport } from '../src/mail/transport/transport.js';
import { outgoingMail, selfSignedCertificate, useSmtpFixtures, withoutBoundaries } from './mail.smtp-client.support.js';

/**
 * The SMTP client (src/mail/smtp-client.ts) against a real smtp-server on loopback: pipelined and
 * plain servers, STARTTLS and implicit TLS with a certificate made for the test, AUTH PLAIN and
 * LOGIN, the pool's reuse and bounds, and a message arriving exactly as composed.
 */

const FROM = 'tasks@hitl.example-service.dev';
const TO = 'operator@ops.example-service.dev';
const certificate = selfSignedCertificate();

const mail = (overrides: Partial<OutgoingMail> = {}): OutgoingMail => outgoingMail({ ...overrides });

const { real, scripted, pool } = useSmtpFixtures();

async function send(p: SmtpPool, m: OutgoingMail = mail()): Promise<OutgoingMail> {
  await p.send(mailEnvelope(m), composeMail(m));
  return m;
}

describe('the SMTP client against a real server', () => {
  it('pipelines MAIL FROM, RCPT TO and DATA when PIPELINING is offered, and delivers the message as composed', async () => {
    const server = await real();
    const p = pool(server.url);
    const sent = await send(p, mail({ replyTo: 'agent@mail.example-agent.dev' }));
    expect(server.received).toHaveLength(1);
    const [received] = server.received;
    expect(received!.envelope).toEqual({ from: FROM, to: [TO] });
    expect(withoutBoundaries(received!.raw)).toBe(withoutBoundaries(composeMail(sent)));
    expect(received!.parsed.subject).toBe(sent.subject);
    expect(received!.parsed.messageId).toBe(`<${sent.id}@hitl.example-service.dev>`);
    expect(received!.secure).toBe(false);
  });

  it('sends the commands of a message in one write to a pipelining server, and the message with its dot in another', async () => {
    const server = await scripted();
    const p = pool(server.url);
    await send(p);
    const session = server.sessions[0]!;
    const at = session.chunks.findIndex((chunk) => chunk.startsWith('MAIL FROM:'));
    const [envelopeChunk, bodyChunk] = session.chunks.slice(at, at + 2);
    const size = Number(/SIZE=(\d+)/.exec(envelopeChunk ?? '')?.[1]);
    expect(envelopeChunk).toBe(`MAIL FROM:<${FROM}> SIZE=${size}\r\nRCPT TO:<${TO}>\r\nDATA\r\n`);
    expect(bodyChunk?.startsWith('From: ')).toBe(true);
    expect(bodyChunk?.endsWith('\r\n.\r\n')).toBe(true);
    // RFC 1870: the message's size without its terminating dot line.
    expect(size).toBe(bodyChunk!.length - 3);
  });

  it('sends one command at a time to a server that does not offer PIPELINING, and delivers all the same', async () => {
    const plain = await scripted({ extensions: ['SIZE 1000000'] });
    await send(pool(plain.url));
    const session = plain.sessions[0]!;
    const start = session.chunks.findIndex((chunk) => chunk.startsWith('MAIL FROM:'));
    expect(session.chunks.slice(start, start + 3)).toEqual([expect.stringMatching(/^MAIL FROM:<[^>]+> SIZE=\d+\r\n$/), `RCPT TO:<${TO}>\r\n`, 'DATA\r\n']);

    const server = await real({ hidePIPELINING: true });
    const p = pool(server.url);
    const sent = [await send(p), await send(p)];
    expect(server.received.map((m) => m.parsed.messageId)).toEqual(sent.map((m) => `<${m.id}@hitl.example-service.dev>`));
    expect(server.connections).toBe(1);
  });

  it('falls back to HELO when EHLO is refused', async () => {
    const server = await real({ disabledCommands: ['STARTTLS', 'AUTH', 'EHLO'] });
    await send(pool(server.url));
    expect(server.received).toHaveLength(1);
  });

  it('names itself in EHLO: the given name, or the host name when it is a full domain name, else [127.0.0.1]', async () => {
    const server = await real();
    await send(pool(server.url, { clientName: 'mailer.example-service.dev' }));
    expect(server.received[0]!.clientName).toBe('mailer.example-service.dev');
    expect(defaultClientName('worker-7.internal.example-service.dev')).toBe('worker-7.internal.example-service.dev');
    for (const bad of ['a1b2c3d4', '', 'under_score.example.dev', '-x.example.dev', 'x..dev']) expect(defaultClientName(bad), bad).toBe('[127.0.0.1]');
  });

  it('upgrades with STARTTLS to a certificate trusted through the tls option, and keeps the TLS connection', async () => {
    const server = await real({ disabledCommands: ['AUTH'], key: certificate.key, cert: certificate.cert });
    const p = pool(server.url, { tls: { ca: certificate.cert } });
    for (let i = 0; i < 3; i += 1) await send(p);
    expect(server.received.map((m) => m.secure)).toEqual([true, true, true]);
    expect(server.connections).toBe(1);
  });

  it('speaks TLS from the first byte over smtps:', async () => {
    const server = await real({ secure: true, key: certificate.key, cert: certificate.cert });
    expect(server.url.startsWith('smtps://')).toBe(true);
    await send(pool(server.url, { tls: { ca: certificate.cert } }));
    expect(server.received[0]!.secure).toBe(true);
  });

  it.each([['PLAIN'], ['LOGIN']])('logs in with AUTH %s, user and password percent-decoded', async (method) => {
    const seen: { method: string; username: string; password: string }[] = [];
    const server = await real({
      disabledCommands: [],
      authMethods: [method],
      authOptional: false,
      key: certificate.key,
      cert: certificate.cert,
      onAuth(auth, _session, callback) {
        seen.push({ method: auth.method, username: auth.username ?? '', password: auth.password ?? '' });
        if (auth.username === 'mailer@example-service.dev' && auth.password === 'p@ss:w/rd %€') return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
    });
    const url = `smtp://${encodeURIComponent('mailer@example-service.dev')}:${encodeURIComponent('p@ss:w/rd %€')}@127.0.0.1:${server.port}`;
    await send(pool(url, { tls: { ca: certificate.cert } }));
    expect(seen).toEqual([{ method, username: 'mailer@example-service.dev', password: 'p@ss:w/rd %€' }]);
    expect(server.received[0]!.user).toBe('mailer@example-service.dev');
  });

  it('prefers AUTH PLAIN when both are offered', async () => {
    const methods: string[] = [];
    const server = await real({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['LOGIN', 'PLAIN'],
      onAuth(auth, _session, callback) {
        methods.push(auth.method);
        callback(null, { user: auth.username });
      },
    });
    await send(pool(`smtp://u:p@127.0.0.1:${server.port}`));
    expect(methods).toEqual(['PLAIN']);
  });
});

describe('the message on the wire', () => {
  it('dot-stuffs: lines that are a dot, or start with dots, arrive intact', async () => {
    const server = await real();
    const text = ['Before', '.', '..', '.hidden', '...three', 'After a dot line', '.'].join('\n');
    const sent = await send(pool(server.url), mail({ text }));
    expect(server.received[0]!.parsed.text).toBe(text);
    expect(withoutBoundaries(server.received[0]!.raw)).toBe(withoutBoundaries(composeMail(sent)));
  });

  it('sends any line ending as CRLF, stuffs dots after every kind, and ends the message with a line break', async () => {
    const server = await scripted();
    const raw = Buffer.from('Subject: x\n\nlf line\r\ncrlf line\rcr line\n.lf dot\r.cr dot\r\n..crlf dots\nno final break', 'latin1');
    await pool(server.url).send({ from: FROM, to: [TO] }, raw);
    expect(server.messages[0]).toBe('Subject: x\r\n\r\nlf line\r\ncrlf line\r\ncr line\r\n..lf dot\r\n..cr dot\r\n...crlf dots\r\nno final break\r\n');
    expect(dataBlock(Buffer.from('.\r\n', 'latin1')).toString('latin1')).toBe('..\r\n.\r\n');
    expect(dataBlock(Buffer.alloc(0)).toString('latin1')).toBe('.\r\n');
    const ready = Buffer.from('a\r\nb\r\n', 'latin1');
    expect(dataBlock(ready).toString('latin1')).toBe('a\r\nb\r\n.\r\n');
  });

  it('delivers 10 MiB of attachments byte for byte', async () => {
    const server = await real({ size: 20 * 1024 * 1024 });
    const files = [
      { filename: 'evidence.bin', contentType: 'application/octet-stream', content: randomBytes(6 * 1024 * 1024) },
      { filename: 'photo.jpg', contentType: 'image/jpeg', content: randomBytes(4 * 1024 * 1024) },
    ];
    await send(pool(server.url), mail({ attachments: files }));
    const parsed = server.received[0]!.parsed as unknown as { attachments: { filename: string; content: Buffer }[] };
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['evidence.bin', 'photo.jpg']);
    expect(parsed.attachments[0]!.content.equals(files[0]!.content)).toBe(true);
    expect(parsed.attachments[1]!.content.equals(files[1]!.content)).toBe(true);
  });
});

describe('the pool', () => {
  it('keeps one connection for sends one after another', async () => {
    const server = await real();
    const p = pool(server.url, { poolSize: 4 });
    for (let i = 0; i < 5; i += 1) await send(p);
    expect(server.received).toHaveLength(5);
    expect(server.connections).toBe(1);
    expect(p.size).toBe(1);
  });

  it('never opens more than poolSize connections for 50 sends at once, and delivers every one', async () => {
    const server = await real({}, () => new Promise((resolve) => setTimeout(resolve, 5)));
    const p = pool(server.url, { poolSize: 3 });
    const sent = Array.from({ length: 50 }, () => mail());
    await Promise.all(sent.map((m) => send(p, m)));
    expect(server.received).toHaveLength(50);
    expect(new Set(server.received.map((m) => m.parsed.messageId))).toEqual(new Set(sent.map((m) => `<${m.id}@hitl.example-service.dev>`)));
    expect(server.maxOpen).toBe(3);
    expect(server.connections).toBe(3);
  });

  it("writes the next waiting message's envelope behind a message's body, in one write, so a message costs one round trip", async () => {
    const server = await scripted();
    const p = pool(server.url, { poolSize: 1 });
    const mails = [mail({ subject: 'one' }), mail({ subject: 'two' }), mail({ subject: 'three' })];
    await Promise.all(mails.map((m) => send(p, m)));
    const session = server.sessions[0]!;
    expect(session.messages.map((m) => /Subject: (\w+)/.exec(m)?.[1])).toEqual(['one', 'two', 'three']);
    // The first envelope alone; the second and third behind the body before them; the last body alone.
    const envelopes = session.chunks.filter((chunk) => chunk.includes('MAIL FROM:'));
    expect(envelopes).toHaveLength(3);
    expect(envelopes[0]).toMatch(/^MAIL FROM:/);
    for (const chunk of envelopes.slice(1)) expect(chunk).toMatch(/\r\n\.\r\nMAIL FROM:<[^>]+> SIZE=\d+\r\nRCPT TO:<[^>]+>\r\nDATA\r\n$/);
    expect(session.chunks.at(-1)).toMatch(/Subject: three[\s\S]*\r\n\.\r\n$/);
  });

  it('sends no envelope ahead to a server without PIPELINING, nor past maxMessages', async () => {
    const plain = await scripted({ extensions: ['SIZE 10485760'] });
    await Promise.all([send(pool(plain.url, { poolSize: 1 })), send(pool(plain.url, { poolSize: 1 }))]);
    const q = pool(plain.url, { poolSize: 1 });
    await Promise.all([send(q), send(q), send(q)]);
    for (const session of plain.sessions) expect(session.chunks.some((chunk) => /\.\r\nMAIL FROM/.test(chunk))).toBe(false);
    const piped = await scripted();
    const r = pool(piped.url, { poolSize: 1, maxMessages: 2 });
    await Promise.all([send(r), send(r), send(r)]);
    expect(piped.sessions.map((session) => session.messages.length)).toEqual([2, 1]);
    expect(piped.sessions[0]!.commands.filter((c) => c.startsWith('MAIL FROM'))).toHaveLength(2);
  });

  it('says QUIT after maxMessages on a connection and opens a new one', async () => {
    const server = await scripted();
    const p = pool(server.url, { maxMessages: 2 });
    for (let i = 0; i < 5; i += 1) await send(p);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.sessions.map((s) => s.messages.length)).toEqual([2, 2, 1]);
    expect(server.sessions.slice(0, 2).map((s) => s.commands.at(-1))).toEqual(['QUIT', 'QUIT']);
  });

  it('replaces a connection the server closed while idle, without failing the next send', async () => {
    const server = await real({ socketTimeout: 150 });
    const p = pool(server.url);
    await send(p);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.open).toBe(0);
    await send(p);
    expect(server.received).toHaveLength(2);
    expect(server.connections).toBe(2);
  });

  it('closes a connection idle for the socket timeout with QUIT, and opens a new one for the next send', async () => {
    const server = await scripted();
    const p = pool(server.url, { socketTimeoutMs: 200 });
    await send(p);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(p.size).toBe(0);
    await send(p);
    expect(server.sessions.map((s) => s.messages.length)).toEqual([1, 1]);
  });

  it('hands a send to a new connection when a kept one turns out closed before the message was written', async () => {
    // The server hangs up on the second MAIL FROM of a session without a word, as when its idle
    // timeout and our send cross; and a server that stops at 2 messages a session says 421.
    for (const answer of ['close', '421 4.7.0 Too many messages on this connection']) {
      const server = await scripted({ reply: (command, session) => (command.startsWith('MAIL FROM') && session.messages.length === 2 ? answer : undefined) });
      const p = pool(server.url);
      for (let i = 0; i < 5; i += 1) await send(p);
      expect(server.messages).toHaveLength(5);
      expect(server.sessions.map((s) => s.messages.length)).toEqual([2, 2, 1]);
    }
  });

  it('close() fails the sends still waiting, lets those in flight finish, and refuses new ones', async () => {
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await real({}, async () => {
      arrived();
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    const p = pool(server.url, { poolSize: 1 });
    const first = send(p);
    // The second's envelope goes behind the first's body: in flight too when close() comes.
    const second = send(p);
    const waiting = [send(p), send(p)];
    for (const w of waiting) w.catch(() => undefined);
    await inFlight;
    p.close();
    await expect(first).resolves.toBeDefined();
    await expect(second).resolves.toBeDefined();
    for (const w of waiting) await expect(w).rejects.toMatchObject({ code: 'ECONNECTION', message: expect.stringContaining('closed') });
    await expect(send(p)).rejects.toMatchObject({ code: 'ECONNECTION' });
    expect(server.received).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.open).toBe(0);
  });
});

describe('SMTP_URL', () => {
  it('takes smtp: and smtps: with their default ports and percent-decoded credentials', () => {
    expect(parseSmtpUrl('smtp://mail.example-service.dev')).toEqual({ host: 'mail.example-service.dev', port: 587, secure: false });
    expect(parseSmtpUrl('smtps://mail.example-service.dev')).toEqual({ host: 'mail.example-service.dev', port: 465, secure: true });
    expect(parseSmtpUrl('smtp://us%40er:p%3Ass%2Fw@mail.example-service.dev:2525/')).toEqual({
      host: 'mail.example-service.dev',
      port: 2525,
      secure: false,
      user: 'us@er',
      password: 'p:ss/w',
    });
    expect(parseSmtpUrl('smtps://apikey@[::1]:4650')).toEqual({ host: '::1', port: 4650, secure: true, user: 'apikey', password: '' });
  });

  it('the SMTP transport connects with its first mail, not before; close() before then opens nothing', async () => {
    const server = await scripted();
    const config = { smtpUrl: server.url, dataDir: '/nonexistent', mail: { ...loadConfig({}).mail, concurrency: 2 } };
    createMailTransport(config).close();
    const transport = createMailTransport(config);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.sessions).toHaveLength(0);
    await transport.send(mail());
    expect(server.sessions).toHaveLength(1);
    transport.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.sessions[0]!.commands.at(-1)).toBe('QUIT');
  });
});
