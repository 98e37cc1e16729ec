import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { describeSendError, isPermanentRejection } from '../src/mail/errors.js';
import { composeMail, mailEnvelope, type OutgoingMail } from '../src/mail/transport/mime.js';
import { parseSmtpUrl, SmtpError, type SmtpPool, SmtpUrlError } from '../src/mail/transport/smtp-client.js';
import { outgoingMail, selfSignedCertificate, smtpReply, startRealServer, useSmtpFixtures } from './mail.smtp-client.support.js';

/**
 * The SMTP client's failures, as the outbox worker sees them: the error's code and reply, and
 * whether isPermanentRejection (mail/errors.ts) fails the mail for good or lets the worker retry.
 * Never a second copy: a send lost after its message was written is not sent again by the pool.
 */

const FROM = 'tasks@hitl.example-service.dev';
const TO = 'operator@ops.example-service.dev';
const certificate = selfSignedCertificate();

const mail = (overrides: Partial<OutgoingMail> = {}): OutgoingMail =>
  outgoingMail({ subject: 'New task', text: 'A new task was submitted.\n', html: null, ...overrides });

const { real, scripted, pool, track } = useSmtpFixtures();

function send(p: SmtpPool, m: OutgoingMail = mail()): Promise<void> {
  return p.send(mailEnvelope(m), composeMail(m));
}

/** The error a send failed with (the test fails if it did not fail). */
async function failure(sending: Promise<unknown>): Promise<SmtpError> {
  const error = await sending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SmtpError);
  return error as SmtpError;
}

describe('refusals of the message: permanent for 5xx, retried for 4xx', () => {
  it('550 to RCPT TO is EENVELOPE and permanent; the connection is reset and serves the next mail', async () => {
    let refuse = true;
    const server = await real({
      onRcptTo(_address, _session, callback) {
        if (refuse) return callback(smtpReply(550, 'Mailbox unavailable: no such user here'));
        return callback();
      },
    });
    const p = pool(server.url);
    const error = await failure(send(p));
    expect(error).toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
    expect(error.response).toMatch(/^550 .*no such user here/);
    expect(isPermanentRejection(error)).toBe(true);
    expect(describeSendError(error)).toMatch(/^EENVELOPE: 550 /);
    refuse = false;
    await send(p);
    expect(server.received).toHaveLength(1);
    expect(server.connections).toBe(1);
  });

  it('the same 550 without PIPELINING, and a 553 to MAIL FROM', async () => {
    const server = await real({
      hidePIPELINING: true,
      onRcptTo: (_address, _session, callback) => callback(smtpReply(550, 'No such user')),
    });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
    expect(isPermanentRejection(error)).toBe(true);

    const sender = await real({ onMailFrom: (_address, _session, callback) => callback(smtpReply(553, 'Sender address rejected')) });
    const refused = await failure(send(pool(sender.url)));
    expect(refused).toMatchObject({ code: 'EENVELOPE', responseCode: 553 });
    expect(isPermanentRejection(refused)).toBe(true);
  });

  it('a 4xx to DATA is EMESSAGE and retried; a 5xx is permanent', async () => {
    let code = 451;
    const server = await real({}, () => {
      throw smtpReply(code, 'Try again later');
    });
    const p = pool(server.url);
    const temporary = await failure(send(p));
    expect(temporary).toMatchObject({ code: 'EMESSAGE', responseCode: 451 });
    expect(isPermanentRejection(temporary)).toBe(false);
    code = 554;
    const permanent = await failure(send(p));
    expect(permanent).toMatchObject({ code: 'EMESSAGE', responseCode: 554 });
    expect(isPermanentRejection(permanent)).toBe(true);
    expect(server.connections).toBe(1);
  });

  it('a DATA command refused is EMESSAGE; a multi-line reply is kept whole', async () => {
    const server = await scripted({
      reply: (command) => (command === 'DATA' ? '554-5.7.1 Rejected\n554-for policy reasons\n554 see the postmaster' : undefined),
    });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'EMESSAGE', responseCode: 554, response: '554-5.7.1 Rejected\n554-for policy reasons\n554 see the postmaster' });
    expect(isPermanentRejection(error)).toBe(true);
    expect(describeSendError(error)).toBe('EMESSAGE: 554-5.7.1 Rejected 554-for policy reasons 554 see the postmaster');
  });
});

describe('outages: retried, never permanent', () => {
  it('421 at connect', async () => {
    const server = await real({ onConnect: (_session, callback) => callback(smtpReply(421, 'Service temporarily unavailable')) });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'ECONNECTION', responseCode: 421 });
    expect(error.response).toContain('Service temporarily unavailable');
    expect(isPermanentRejection(error)).toBe(false);
  });

  it('421 to MAIL FROM on a new connection', async () => {
    const server = await real({ onMailFrom: (_address, _session, callback) => callback(smtpReply(421, 'Closing')) });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'EENVELOPE', responseCode: 421 });
    expect(isPermanentRejection(error)).toBe(false);
  });

  it('connection refused', async () => {
    // Started and closed here: nothing listens on its port any more.
    const server = await startRealServer();
    const url = server.url;
    await server.close();
    const error = await failure(send(pool(url)));
    expect(error.code).toBe('ECONNECTION');
    expect(error.message).toContain('ECONNREFUSED');
    expect(isPermanentRejection(error)).toBe(false);
  });

  it('an outage fails every waiting send, each after its own attempt, and leaves no connection behind', async () => {
    const server = await scripted({ greeting: '421 down for maintenance' });
    const p = pool(server.url, { poolSize: 2 });
    const errors = await Promise.all(Array.from({ length: 5 }, () => failure(send(p))));
    expect(errors.map((e) => e.responseCode)).toEqual([421, 421, 421, 421, 421]);
    expect(server.sessions).toHaveLength(5);
    expect(p.size).toBe(0);
  });

  it('a greeting that never comes times out with ETIMEDOUT', async () => {
    const server = await scripted({ greeting: null });
    const error = await failure(send(pool(server.url, { greetingTimeoutMs: 200 })));
    expect(error).toMatchObject({ code: 'ETIMEDOUT' });
    expect(error.message).toMatch(/greeting/i);
  });

  it('a server that stops answering mid-session times out with ETIMEDOUT (socket timeout)', async () => {
    const server = await scripted({ message: () => 'hang' });
    const started = Date.now();
    const error = await failure(send(pool(server.url, { socketTimeoutMs: 300 })));
    expect(error.code).toBe('ETIMEDOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(server.messages).toHaveLength(1);
    expect(server.sessions).toHaveLength(1);
  });

  it('a TLS handshake that stalls after STARTTLS times out with ETIMEDOUT', async () => {
    const server = await scripted({
      extensions: ['PIPELINING', 'STARTTLS'],
      reply: (command, session) => (command === 'STARTTLS' ? '220 go ahead' : session.commands.includes('STARTTLS') ? 'hang' : undefined),
    });
    const error = await failure(send(pool(server.url, { socketTimeoutMs: 300 })));
    expect(error.code).toBe('ETIMEDOUT');
    expect(server.sessions[0]!.commands).toContain('STARTTLS');
  });

  it('a reply that is not SMTP is EPROTOCOL', async () => {
    const server = await scripted({ reply: (command) => (command.startsWith('EHLO') ? 'HTTP/1.1 400 Bad Request' : undefined) });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'EPROTOCOL', response: 'HTTP/1.1 400 Bad Request' });
  });
});

describe('a connection lost with the message: that send fails, and is not sent again', () => {
  it('the server dies mid-DATA: ECONNECTION, one attempt only, also on a kept connection', async () => {
    let dieOn = 1;
    let transactions = 0;
    const server = await scripted({
      reply: (command) => {
        if (command === 'DATA') transactions += 1;
        return undefined;
      },
      onBodyChunk: (_chunk, session) => {
        if (transactions === dieOn) session.socket.destroy();
      },
    });
    const p = pool(server.url);
    const fresh = await failure(send(p));
    expect(fresh.code).toBe('ECONNECTION');
    expect(isPermanentRejection(fresh)).toBe(false);
    expect(transactions).toBe(1);

    dieOn = 3;
    await send(p);
    const kept = await failure(send(p));
    expect(kept.code).toBe('ECONNECTION');
    expect(transactions).toBe(3);
    expect(server.messages).toHaveLength(1);
  });

  it('a new connection that closes at MAIL FROM fails the send (only a kept one hands it on)', async () => {
    const server = await scripted({ reply: (command) => (command.startsWith('MAIL FROM') ? 'close' : undefined) });
    const error = await failure(send(pool(server.url)));
    expect(error.code).toBe('ECONNECTION');
    expect(server.sessions).toHaveLength(1);
  });

  it('a refused recipient after DATA was accepted anyway closes the connection rather than send an empty message', async () => {
    const server = await scripted({ reply: (command) => (command.startsWith('RCPT TO') ? '550 no' : undefined) });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.messages).toEqual([]);
    expect(server.sessions[0]!.socket.destroyed).toBe(true);
  });
});

describe("the next message's envelope behind a body (RFC 2920)", () => {
  it('a connection lost after the body: that send fails and is not sent again, the next goes over a new connection', async () => {
    // The first connection dies once the first message and the next envelope are in.
    const server = await scripted({ message: (_body, session) => (session.id === 1 ? 'close' : undefined) });
    const p = pool(server.url, { poolSize: 1 });
    const first = mail({ subject: 'first' });
    const second = mail({ subject: 'second' });
    const sending = [send(p, first), send(p, second)];
    const lost = await failure(sending[0] as Promise<void>);
    expect(lost.code).toBe('ECONNECTION');
    await sending[1];
    // The second's envelope had gone to the first connection, which took nothing of it.
    expect(server.sessions[0]!.commands.filter((c) => c.startsWith('MAIL FROM'))).toHaveLength(2);
    expect(server.sessions[0]!.messages).toHaveLength(1);
    expect(server.sessions[1]!.messages).toHaveLength(1);
    expect(server.sessions[1]!.messages[0]).toContain('Subject: second');
  });

  it('a message refused at its end does not stop the one whose envelope went behind it, and no RSET cancels that one', async () => {
    const server = await scripted({ message: (body) => (body.includes('Subject: refused') ? '554 5.7.1 not today' : undefined) });
    const p = pool(server.url, { poolSize: 1 });
    const sending = [send(p, mail({ subject: 'refused' })), send(p, mail({ subject: 'fine' }))];
    const refused = await failure(sending[0] as Promise<void>);
    expect(refused).toMatchObject({ code: 'EMESSAGE', responseCode: 554 });
    await sending[1];
    const session = server.sessions[0]!;
    expect(server.sessions).toHaveLength(1);
    expect(session.commands).not.toContain('RSET');
    expect(session.messages.map((m) => /Subject: (\w+)/.exec(m)?.[1])).toEqual(['refused', 'fine']);
  });

  it('a refused envelope ahead of its body fails that send alone; the connection goes on', async () => {
    let mails = 0;
    let refusedTransaction = false;
    // As a real server: after a refused MAIL FROM, RCPT TO and DATA are out of sequence.
    const server = await scripted({
      reply: (command) => {
        if (command.startsWith('MAIL FROM')) {
          refusedTransaction = ++mails === 2;
          return refusedTransaction ? '451 4.3.0 try later' : undefined;
        }
        return refusedTransaction && (command.startsWith('RCPT TO') || command === 'DATA') ? '503 5.5.1 need MAIL first' : undefined;
      },
    });
    const p = pool(server.url, { poolSize: 1 });
    const sending = [send(p), send(p), send(p)];
    await sending[0];
    const later = await failure(sending[1] as Promise<void>);
    expect(later).toMatchObject({ code: 'EENVELOPE', responseCode: 451 });
    expect(isPermanentRejection(later)).toBe(false);
    await sending[2];
    expect(server.sessions).toHaveLength(1);
    expect(server.messages).toHaveLength(2);
  });
});

describe('authentication and TLS failures', () => {
  const authServer = (methods: string[]) =>
    real({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authOptional: false,
      authMethods: methods,
      onAuth: (auth, _session, callback) =>
        auth.password === 'right-password' ? callback(null, { user: auth.username }) : callback(smtpReply(535, 'Authentication credentials invalid')),
    });

  it.each([['PLAIN'], ['LOGIN']])('a wrong password over AUTH %s is EAUTH, retried, and the password is in no message', async (method) => {
    const server = await authServer([method]);
    const error = await failure(send(pool(`smtp://mailer:wr0ng-s3cret-pa55@127.0.0.1:${server.port}`)));
    expect(error).toMatchObject({ code: 'EAUTH', responseCode: 535 });
    expect(isPermanentRejection(error)).toBe(false);
    for (const text of [error.message, String(error.response), describeSendError(error), JSON.stringify(error), String(error.stack)]) {
      expect(text).not.toContain('wr0ng-s3cret-pa55');
      expect(text).not.toContain(Buffer.from('wr0ng-s3cret-pa55').toString('base64'));
    }
    expect(server.received).toHaveLength(0);
  });

  it('credentials for a server that offers neither AUTH PLAIN nor AUTH LOGIN: EAUTH', async () => {
    const server = await scripted({ extensions: ['PIPELINING', 'AUTH CRAM-MD5'] });
    const error = await failure(send(pool(`smtp://mailer:secret@127.0.0.1:${server.port}`)));
    expect(error).toMatchObject({ code: 'EAUTH' });
    expect(error.message).toMatch(/neither AUTH PLAIN nor AUTH LOGIN/);
    const none = await scripted({ extensions: ['PIPELINING'] });
    expect((await failure(send(pool(`smtp://mailer:secret@127.0.0.1:${none.port}`)))).code).toBe('EAUTH');
  });

  it('STARTTLS to a certificate not trusted: ETLS, nothing sent', async () => {
    const server = await real({ disabledCommands: ['AUTH'], key: certificate.key, cert: certificate.cert });
    const error = await failure(send(pool(server.url)));
    expect(error.code).toBe('ETLS');
    expect(error.message).toMatch(/self[- ]signed/i);
    expect(isPermanentRejection(error)).toBe(false);
    expect(server.received).toHaveLength(0);
  });

  it('smtps: to a certificate not trusted: ETLS', async () => {
    const server = await real({ secure: true, key: certificate.key, cert: certificate.cert });
    const error = await failure(send(pool(server.url)));
    expect(error.code).toBe('ETLS');
    expect(server.received).toHaveLength(0);
  });

  it('a trusted certificate for another host name: ETLS (the name is verified)', async () => {
    const other = selfSignedCertificate('DNS:mail.elsewhere.example');
    const server = await real({ disabledCommands: ['AUTH'], key: other.key, cert: other.cert });
    const error = await failure(send(pool(server.url, { tls: { ca: other.cert } })));
    expect(error.code).toBe('ETLS');
    expect(error.message).toMatch(/127\.0\.0\.1|altnames|IP/i);
    expect(server.received).toHaveLength(0);
  });

  it('a server that refuses STARTTLS: ETLS', async () => {
    const server = await scripted({
      extensions: ['PIPELINING', 'STARTTLS'],
      reply: (command) => (command === 'STARTTLS' ? '454 TLS not available' : undefined),
    });
    const error = await failure(send(pool(server.url)));
    expect(error).toMatchObject({ code: 'ETLS', responseCode: 454 });
  });
});

describe('hostile or malformed input', () => {
  it('an envelope address with a line break, space or angle bracket is refused before anything is written', async () => {
    const server = await scripted();
    const p = pool(server.url);
    for (const address of [`${TO}\r\nRCPT TO:<victim@target.example>`, `${TO}>`, 'a b@c.dev', `<${TO}`]) {
      const error = await failure(p.send({ from: FROM, to: [address] }, Buffer.from('Subject: x\r\n\r\nx\r\n')));
      expect(error.code).toBe('EENVELOPE');
      const fromError = await failure(p.send({ from: address, to: [TO] }, Buffer.from('Subject: x\r\n\r\nx\r\n')));
      expect(fromError.code).toBe('EENVELOPE');
    }
    expect(server.sessions).toHaveLength(0);
  });

  it('a reply line without end, or a reply of endless lines, is EPROTOCOL', async () => {
    const endless = await scripted({ reply: (command) => (command.startsWith('EHLO') ? `${'250-more\n'.repeat(300)}250 done` : undefined) });
    const lines = await failure(send(pool(endless.url)));
    expect(lines).toMatchObject({ code: 'EPROTOCOL', message: 'Reply too long' });
    // A line far over the limit that never ends.
    const server = await new Promise<Server>((resolve) => {
      const s = createServer((socket) => {
        socket.write('220 hi\r\n');
        socket.once('data', () => socket.write('250-'.padEnd(10_000, 'x')));
      });
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
    track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const error = await failure(send(pool(`smtp://127.0.0.1:${port}`)));
    expect(error).toMatchObject({ code: 'EPROTOCOL', message: 'Reply line too long' });
  });

  it('SMTP_URL forms other than smtp(s)://user:pass@host:port are refused, naming no password', () => {
    const cases: [string, RegExp][] = [
      ['smtp://user:s3cret@mail.example.dev:587?secure=true', /query/],
      ['smtp://user:s3cret@mail.example.dev:587/path', /path/],
      ['smtp://user:s3cret@mail.example.dev#frag', /fragment/],
      ['smtp://', /no host/],
      ['http://user:s3cret@mail.example.dev', /smtp: or smtps:/],
      ['smtp://user:s3cret%zz@mail.example.dev', /percent-encoding in its password/],
      ['smtp://:s3cret@mail.example.dev', /password but no user name/],
      ['not a url s3cret', /not a URL/],
    ];
    for (const [url, message] of cases) {
      let thrown: unknown;
      try {
        parseSmtpUrl(url);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, url).toBeInstanceOf(SmtpUrlError);
      expect((thrown as Error).message, url).toMatch(message);
      expect((thrown as Error).message, url).not.toContain('s3cret');
    }
  });

  it('a malformed SMTP_URL stops the start with a configuration error naming SMTP_URL, before anything listens', () => {
    const bad = 'smtp://user:s3cret@mail.example.dev?tls.rejectUnauthorized=false';
    expect(() => loadConfig({ SMTP_URL: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ SMTP_URL: bad })).toThrow(/^Invalid configuration: SMTP_URL must not have a query/);
    expect(() => loadConfig({ SMTP_URL: bad })).not.toThrow(/s3cret/);
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example.dev' })).toThrow(/SMTP_URL/);
    expect(loadConfig({ SMTP_URL: 'smtps://user:s3cret@mail.example.dev' }).smtpUrl).toBe('smtps://user:s3cret@mail.example.dev');
  });
});
