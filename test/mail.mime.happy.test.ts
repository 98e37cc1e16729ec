import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { taskSubmittedMail } from '../src/mail/templates/operator.js';
import { composeMail, mailEnvelope, type OutgoingMail } from '../src/mail/transport/mime.js';
import { createMailTransport } from '../src/mail/transport/transport.js';
import type { TaskRow } from '../src/store/tasks/tasks-repo.js';
import { outgoingMail } from './mail.smtp-client.support.js';
import { parseMail } from './support/smtp.js';

/**
 * The message composer (src/mail/mime.ts), read back with mailparser: headers, text and HTML,
 * encodings chosen per part, long lines, non-ASCII subjects and file names, attachments byte for
 * byte. The SMTP suites show the same messages arriving over the wire.
 */

interface ParsedAttachment {
  filename?: string;
  contentType: string;
  contentDisposition: string;
  content: Buffer;
}

const mail = (overrides: Partial<OutgoingMail> = {}): OutgoingMail =>
  outgoingMail({ id: 'mail-0123456789abcdef0123456789abcdef', text: 'A new task was submitted.\nOpen it in the console.', ...overrides });

const source = (m: OutgoingMail) => composeMail(m).toString('latin1');
const headerBlock = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n'));
/** The Content-Transfer-Encoding of the part whose Content-Type starts with `type`. */
function encodingOf(raw: string, type: string): string | undefined {
  const at = raw.indexOf(`Content-Type: ${type}`);
  return at < 0 ? undefined : /Content-Transfer-Encoding: (\S+)/.exec(raw.slice(at))?.[1];
}
const attachmentsOf = async (raw: Buffer) => ((await parseMail(raw)) as unknown as { attachments: ParsedAttachment[] }).attachments;

describe('composing a mail', () => {
  it('writes the headers in order, with CRLF line endings only and nothing but ASCII', async () => {
    const m = mail({ replyTo: 'agent@mail.example-agent.dev', inReplyTo: '<msg-2030-abc@hitl.example-service.dev>' });
    const raw = composeMail(m);
    const text = raw.toString('latin1');
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(raw.every((byte) => byte < 0x80)).toBe(true);
    expect(
      headerBlock(text)
        .split('\r\n')
        .filter((line) => !/^[ \t]/.test(line))
        .map((line) => line.slice(0, line.indexOf(':'))),
    ).toEqual(['From', 'To', 'Reply-To', 'Subject', 'Message-ID', 'In-Reply-To', 'References', 'Date', 'MIME-Version', 'Content-Type']);
    const parsed = await parseMail(raw);
    expect(parsed.from?.value[0]?.address).toBe(m.from);
    expect(parsed.replyTo?.value[0]?.address).toBe('agent@mail.example-agent.dev');
    expect(parsed.subject).toBe(m.subject);
    expect(parsed.messageId).toBe('<mail-0123456789abcdef0123456789abcdef@hitl.example-service.dev>');
    expect(text).toContain('\r\nIn-Reply-To: <msg-2030-abc@hitl.example-service.dev>\r\nReferences: <msg-2030-abc@hitl.example-service.dev>\r\n');
    expect(text).toContain('\r\nDate: Sun, 10 Mar 2030 10:00:00 +0000\r\n');
    expect(parsed.text).toBe('A new task was submitted.\nOpen it in the console.');
    expect(parsed.html).toBe('<p>A new task was submitted.</p>');
  });

  it('leaves out Reply-To, In-Reply-To and References when there are none, and brackets a bare In-Reply-To', () => {
    const head = headerBlock(source(mail()));
    expect(head).not.toMatch(/^(Reply-To|In-Reply-To|References):/m);
    expect(source(mail({ inReplyTo: 'msg-1@hitl.example-service.dev' }))).toContain('\r\nIn-Reply-To: <msg-1@hitl.example-service.dev>\r\n');
  });

  it('text and HTML go as multipart/alternative; text alone as one text/plain part', async () => {
    const both = source(mail());
    expect(both).toMatch(/\r\nContent-Type: multipart\/alternative;\r\n boundary="[^"]+"\r\n\r\n--/);
    expect(encodingOf(both, 'text/plain; charset=utf-8')).toBe('7bit');
    expect(encodingOf(both, 'text/html; charset=utf-8')).toBe('7bit');
    const alone = source(mail({ html: null }));
    expect(headerBlock(alone)).toMatch(/\r\nContent-Type: text\/plain; charset=utf-8\r\nContent-Transfer-Encoding: 7bit$/);
    expect((await parseMail(Buffer.from(alone, 'latin1'))).text).toBe('A new task was submitted.\nOpen it in the console.\n');
  });

  it('a mail the envelope matches: From and the one recipient', () => {
    expect(mailEnvelope(mail())).toEqual({ from: 'tasks@hitl.example-service.dev', to: ['operator@ops.example-service.dev'] });
    expect(mailEnvelope(mail({ from: 'tasks@bücher.example' }))).toEqual({ from: 'tasks@xn--bcher-kva.example', to: ['operator@ops.example-service.dev'] });
    // MAIL_FROM's default for BASE_URL=http://[::1]:8080 and http://127.0.0.1:8080.
    expect(mailEnvelope(mail({ from: 'no-reply@[::1]' })).from).toBe('no-reply@[::1]');
    expect(source(mail({ from: 'no-reply@127.0.0.1' }))).toContain('\r\nMessage-ID: <mail-0123456789abcdef0123456789abcdef@127.0.0.1>\r\n');
  });

  it('keeps any line ending of the text as a line break, and nothing else', async () => {
    const parsed = await parseMail(composeMail(mail({ text: 'one\r\ntwo\rthree\nfour', html: '<p>a</p>\r<p>b</p>' })));
    expect(parsed.text).toBe('one\ntwo\nthree\nfour');
    expect(parsed.html).toBe('<p>a</p>\n<p>b</p>');
  });
});

describe('non-ASCII and long text', () => {
  it('a non-ASCII subject goes as encoded words folded within 78 characters, and reads back whole', async () => {
    const subject = `Nouvelle tâche : vérifier les horaires d’ouverture de la boulangerie — ${'très '.repeat(20)}longue 🍞`;
    const raw = source(mail({ subject }));
    const head = headerBlock(raw);
    for (const line of head.split('\r\n')) expect(line.length, line).toBeLessThanOrEqual(78);
    expect(head).toMatch(/^Subject: =\?UTF-8\?[QB]\?/m);
    expect((await parseMail(Buffer.from(raw, 'latin1'))).subject).toBe(subject);
  });

  it('a long ASCII subject is folded at spaces; a word too long to fold is encoded so no line passes 998', async () => {
    const long = `Task ${'abcdefgh '.repeat(30)}end`;
    const folded = headerBlock(source(mail({ subject: long })));
    expect(folded).toContain('Subject: Task abcdefgh');
    for (const line of folded.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
    expect((await parseMail(composeMail(mail({ subject: long })))).subject).toBe(long);

    const word = `x${'y'.repeat(1500)}`;
    const raw = source(mail({ subject: word }));
    for (const line of headerBlock(raw).split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
    expect((await parseMail(Buffer.from(raw, 'latin1'))).subject).toBe(word);
  });

  it('non-ASCII text goes quoted-printable, mostly non-Latin text base64 (the shorter), both read back', async () => {
    const latin = 'Öffnungszeiten: Montag bis Freitag, 8–18 Uhr. Café geschlossen.\nZweite Zeile, ganz normal.';
    const cjk = '营业时间：周一至周五，上午八点到下午六点。\n咖啡馆关闭。';
    const raw = source(mail({ text: latin, html: `<p>${cjk}</p>` }));
    expect(encodingOf(raw, 'text/plain; charset=utf-8')).toBe('quoted-printable');
    expect(encodingOf(raw, 'text/html; charset=utf-8')).toBe('base64');
    expect(raw).toContain('\r\nZweite Zeile, ganz normal.\r\n');
    const parsed = await parseMail(Buffer.from(raw, 'latin1'));
    expect(parsed.text).toBe(latin);
    expect(parsed.html).toBe(`<p>${cjk}</p>`);
  });

  it('lines over 998 octets go quoted-printable (soft line breaks) and read back unchanged', async () => {
    const line = `${'0123456789'.repeat(150)}=end`;
    const text = `short\n${line}\n${' trailing spaces   '}\n.dot line`;
    const raw = source(mail({ text }));
    expect(encodingOf(raw, 'text/plain; charset=utf-8')).toBe('quoted-printable');
    for (const l of raw.split('\r\n')) expect(l.length).toBeLessThanOrEqual(998);
    expect((await parseMail(Buffer.from(raw, 'latin1'))).text).toBe(text);
  });

  it("the operator's new-task mail for an ASCII task goes 7bit in both parts: its fields table is a row a line", async () => {
    // The table on one line was 1,007 characters: the whole HTML part went quoted-printable.
    const task = {
      id: `task-2030-${'0'.repeat(32)}`,
      task_type: 'data_collection',
      deadline: '2030-03-11T10:00:00Z',
      location_required: 1,
      location_detail: 'Main square, by the fountain',
      output_format: 'text',
      delivery: 'email',
      requester: 'Bench counter agent',
      source: 'api',
      created_at: '2030-03-10T10:00:00.000Z',
      email_unverified: 1,
      description: 'Count the benches in the park.',
    } as unknown as TaskRow;
    const parts = taskSubmittedMail('https://hitl.example-service.dev', task);
    const raw = composeMail(mail({ subject: parts.subject, text: parts.text, html: parts.html }));
    const text = raw.toString('latin1');
    expect(encodingOf(text, 'text/plain; charset=utf-8')).toBe('7bit');
    expect(encodingOf(text, 'text/html; charset=utf-8')).toBe('7bit');
    expect(Math.max(...text.split('\r\n').map((line) => line.length))).toBeLessThanOrEqual(998);
    expect((await parseMail(raw)).html).toBe(parts.html);
  });

  it('an ASCII line of exactly 998 octets still goes 7bit', () => {
    const raw = source(mail({ text: `${'a'.repeat(998)}\nnext` }));
    expect(encodingOf(raw, 'text/plain; charset=utf-8')).toBe('7bit');
  });
});

describe('attachments', () => {
  it('go base64 in multipart/mixed around the texts, byte for byte, with their types and names', async () => {
    const files = [
      { filename: 'sign.jpg', contentType: 'image/jpeg', content: randomBytes(70_000) },
      { filename: 'hours.txt', contentType: 'text/plain', content: Buffer.from('Opening hours: 8-12\n') },
      { filename: 'empty.bin', contentType: 'application/octet-stream', content: Buffer.alloc(0) },
    ];
    const raw = composeMail(mail({ attachments: files }));
    const text = raw.toString('latin1');
    expect(headerBlock(text)).toMatch(/Content-Type: multipart\/mixed;\r\n boundary="[^"]+"$/);
    expect(text).toMatch(/\r\n\r\n--[^\r]+\r\nContent-Type: multipart\/alternative;\r\n boundary=/);
    for (const line of text.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
    const parsed = await parseMail(raw);
    expect(parsed.text).toBe('A new task was submitted.\nOpen it in the console.');
    const attachments = await attachmentsOf(raw);
    expect(attachments.map((a) => [a.filename, a.contentType, a.contentDisposition])).toEqual([
      ['sign.jpg', 'image/jpeg', 'attachment'],
      ['hours.txt', 'text/plain', 'attachment'],
      ['empty.bin', 'application/octet-stream', 'attachment'],
    ]);
    for (const [i, file] of files.entries()) expect(attachments[i]!.content.equals(file.content), file.filename).toBe(true);
  });

  it('non-ASCII and long file names as RFC 2231 parameters and encoded words, read back whole', async () => {
    const names = ['été à Zürich.jpg', 'отчёт о проверке магазина.pdf', `${'long-ascii-name-'.repeat(8)}end.txt`, 'with space & (parens).txt', '写真.png'];
    const files = names.map((filename) => ({ filename, contentType: 'application/octet-stream', content: Buffer.from(filename) }));
    const raw = composeMail(mail({ html: null, attachments: files }));
    const text = raw.toString('latin1');
    expect(text).toContain("filename*0*=utf-8''");
    expect(text).toMatch(/name="=\?UTF-8\?[QB]\?/);
    for (const line of text.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
    expect((await attachmentsOf(raw)).map((a) => a.filename)).toEqual(names);
  });
});

describe('the .eml transport', () => {
  it('writes the same message with LF line endings', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-eml-'));
    try {
      const m = mail({
        text: 'line one\nline two',
        html: null,
        attachments: [{ filename: 'a.bin', contentType: 'application/octet-stream', content: randomBytes(200) }],
      });
      await createMailTransport({ smtpUrl: undefined, dataDir, mail: loadConfig({}).mail }).send(m);
      const [name] = readdirSync(path.join(dataDir, 'outbox'));
      expect(name).toBe(`2030-03-10T10-00-00-000Z_task_submitted_${m.id}.eml`);
      const file = readFileSync(path.join(dataDir, 'outbox', name!));
      expect(file.includes('\r')).toBe(false);
      const boundary = /boundary="([^"]+)"/.exec(file.toString())?.[1] ?? '';
      expect(file.toString()).toBe(
        composeMail(m)
          .toString('latin1')
          .replace(/=_hts_[0-9a-f]{32}/g, boundary.slice(0, -2))
          .replace(/\r\n/g, '\n'),
      );
      expect((await parseMail(file)).text).toBe('line one\nline two');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
