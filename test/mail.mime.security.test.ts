import { describe, expect, it } from 'vitest';
import { isPermanentRejection } from '../src/mail/errors.js';
import { composeMail, MailHeaderError, mailEnvelope, type OutgoingMail } from '../src/mail/transport/mime.js';
import { outgoingMail } from './mail.smtp-client.support.js';
import { headerNamesOf, parseMail } from './support/smtp.js';

/**
 * The composer's own defence, whatever checked the mail before it (sanitize.ts, the outbox): no
 * header value with a line break or other control character goes out (it is refused), an address
 * is one plain mailbox, and text that looks like an RFC 2047 encoded word is never decoded by the
 * reader into something else. Through the service, test/mail.security.test.ts shows the same.
 */

const VICTIM = 'victim@target.example-agent.dev';

const mail = (overrides: Partial<OutgoingMail> = {}): OutgoingMail =>
  outgoingMail({
    id: 'mail-0123456789abcdef0123456789abcdef',
    kind: 'message_received',
    replyTo: 'agent@mail.example-agent.dev',
    subject: 'Message from planner-bot',
    text: 'Hello',
    html: null,
    ...overrides,
  });

const BREAKS = ['\r\n', '\n', '\r', '\u0000', '\u001b', '\t'];

describe('header injection', () => {
  it.each(BREAKS)('refuses a subject carrying %j, in ASCII or not', (brk) => {
    for (const subject of [`Hello${brk}Bcc: ${VICTIM}`, `Grüße${brk}Bcc: ${VICTIM}`]) {
      expect(() => composeMail(mail({ subject }))).toThrow(MailHeaderError);
      expect(() => composeMail(mail({ subject }))).toThrow(/Subject/);
    }
  });

  it('refuses a line break in every other header value', () => {
    const attacks: Partial<OutgoingMail>[] = [
      { from: `tasks@hitl.example-service.dev\r\nBcc: ${VICTIM}` },
      { to: `operator@ops.example-service.dev\nBcc: ${VICTIM}` },
      { replyTo: `agent@mail.example-agent.dev\r\nBcc: ${VICTIM}` },
      { inReplyTo: `<msg-1@hitl.example-service.dev>\r\nBcc: ${VICTIM}` },
      { id: `mail-1\r\nBcc: ${VICTIM}` },
      { attachments: [{ filename: `a.txt\r\nContent-Type: text/html`, contentType: 'text/plain', content: Buffer.from('x') }] },
      { attachments: [{ filename: `ü.txt\nX: y`, contentType: 'text/plain', content: Buffer.from('x') }] },
    ];
    for (const attack of attacks) expect(() => composeMail(mail(attack)), JSON.stringify(attack)).toThrow(MailHeaderError);
  });

  it('a refused header fails the mail for good: trying again cannot write it', () => {
    let refusal: unknown;
    try {
      composeMail(mail({ subject: `Hello\r\nBcc: ${VICTIM}` }));
    } catch (error) {
      refusal = error;
    }
    expect(isPermanentRejection(refusal)).toBe(true);
    // An outage is not: a lost connection, or a 4xx.
    expect(isPermanentRejection(Object.assign(new Error('Connection closed'), { code: 'ECONNECTION' }))).toBe(false);
    expect(isPermanentRejection(Object.assign(new Error('try later'), { code: 'EENVELOPE', responseCode: 451, response: '451 try later' }))).toBe(false);
  });

  it('an address is one plain mailbox: a list, a display name, brackets or spaces are refused', () => {
    for (const address of [
      `a@b.dev, ${VICTIM}`,
      `"x" <${VICTIM}>`,
      `<${VICTIM}>`,
      'a b@c.dev',
      'no-at-sign',
      '@b.dev',
      'a@',
      `a@b.dev;${VICTIM}`,
      'a(comment)@b.dev',
    ]) {
      expect(() => composeMail(mail({ to: address })), address).toThrow(MailHeaderError);
      expect(() => composeMail(mail({ replyTo: address })), address).toThrow(MailHeaderError);
      expect(() => mailEnvelope(mail({ to: address })), address).toThrow(MailHeaderError);
    }
  });

  it('adds no header or recipient for text that only looks dangerous', async () => {
    const raw = composeMail(mail({ subject: `Hello Bcc: ${VICTIM} Subject: You won`, text: `Body\r\nBcc: ${VICTIM}\r\n\r\nmore` }));
    expect(headerNamesOf(raw)).toEqual([
      'from',
      'to',
      'reply-to',
      'subject',
      'message-id',
      'date',
      'mime-version',
      'content-type',
      'content-transfer-encoding',
    ]);
    const parsed = await parseMail(raw);
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.subject).toBe(`Hello Bcc: ${VICTIM} Subject: You won`);
  });

  it('an attachment type that is not a plain media type goes as application/octet-stream', async () => {
    for (const contentType of ['text/html; charset=x"', 'text/html\r\nX-Injected: yes', 'not a type', '']) {
      const raw = composeMail(mail({ attachments: [{ filename: 'f.bin', contentType, content: Buffer.from('x') }] }));
      expect(raw.toString('latin1')).not.toContain('X-Injected');
      const [file] = ((await parseMail(raw)) as unknown as { attachments: { contentType: string }[] }).attachments;
      expect(file?.contentType, contentType).toBe('application/octet-stream');
    }
  });
});

describe('encoded words agent text could smuggle', () => {
  it('an ASCII subject holding =?…?= is encoded itself, so the reader shows it literally', async () => {
    const subject = `Hello =?UTF-8?Q?Hi=0D=0ABcc:_${VICTIM}?=`;
    const raw = composeMail(mail({ subject }));
    const head = raw.toString('latin1').slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).not.toContain('=?UTF-8?Q?Hi=0D');
    const parsed = await parseMail(raw);
    expect(parsed.subject).toBe(subject);
    expect(parsed.bcc).toBeUndefined();
  });

  it('the same inside a non-ASCII subject', async () => {
    const subject = `Grüße =?UTF-8?B?${Buffer.from(`x\r\nBcc: ${VICTIM}`).toString('base64')}?=`;
    const parsed = await parseMail(composeMail(mail({ subject })));
    expect(parsed.subject).toBe(subject);
  });

  it('a file name holding =?…?= has it split, since readers decode words even inside RFC 2231 values', async () => {
    for (const filename of ['=?UTF-8?Q?evil=0D=0A.exe?= ü.txt', '=?UTF-8?Q?evil=0D=0A.exe?=.txt']) {
      const raw = composeMail(mail({ attachments: [{ filename, contentType: 'text/plain', content: Buffer.from('x') }] }));
      const [file] = ((await parseMail(raw)) as unknown as { attachments: { filename: string }[] }).attachments;
      expect(file?.filename).toBe(filename.replace('=?', '= ?'));
    }
  });
});

describe('boundaries', () => {
  it('a text that writes boundary-like lines cannot end its part early', async () => {
    const forged = [
      '--=_hts_',
      '--=_hts_00000000000000000000000000000000_a',
      '--=_hts_00000000000000000000000000000000_a--',
      'Content-Type: text/html',
      '',
      '<script>x</script>',
    ].join('\n');
    for (let i = 0; i < 20; i += 1) {
      const raw = composeMail(
        mail({ text: forged, html: '<p>real</p>', attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('a') }] }),
      );
      const parsed = await parseMail(raw);
      expect(parsed.text).toBe(forged);
      expect(parsed.html).toBe('<p>real</p>');
      const boundary = /boundary="([^"]+)"/.exec(raw.toString('latin1'))?.[1] ?? '';
      expect(forged).not.toContain(boundary.slice(0, -2));
    }
  });
});
