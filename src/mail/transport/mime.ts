import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import type { MailAttachment } from '../attachments.js';

/**
 * One outgoing mail as an RFC 5322 / MIME message: a Buffer with CRLF line endings, built in one
 * pass of string work (nodemailer's MailComposer built a tree of streams: ~240 µs a mail; this
 * is ~10). The encoders are nodemailer's own primitives (RFC 2047 words, RFC 2231 parameters,
 * quoted-printable, base64), loaded with the first mail.
 *
 * Text parts go as 7bit when they are plain ASCII with no line over 998 octets, otherwise as
 * quoted-printable, or base64 when that is shorter (mostly non-Latin text); charset utf-8 always.
 * Header values are refused (thrown) if they carry a control character, whatever checked them
 * before: a line break there would end the header and start another.
 */

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

interface MimeFuncs {
  isPlainText(value: string, isParam?: boolean): boolean;
  encodeWord(value: string, encoding: 'Q' | 'B', maxLength?: number): string;
  encodeWords(value: string, encoding: 'Q' | 'B', maxLength: number, encodeAll: boolean): string;
  foldLines(value: string, lineLength?: number, afterSpace?: boolean): string;
  buildHeaderValue(structured: { value: string; params: Record<string, string> }): string;
}

interface Encoder {
  encode(data: string | Buffer): string;
  wrap(encoded: string, lineLength?: number): string;
}

interface Primitives {
  mime: MimeFuncs;
  qp: Encoder;
  base64: Encoder;
}

let primitives: Primitives | undefined;

/**
 * nodemailer's encoders, required with the first mail (an instance that sends none never loads
 * them). CommonJS without typings: loaded the CommonJS way, the few functions used typed above.
 * Methods are called on their module object: encodeWords calls `this.encodeWord`.
 */
function load(): Primitives {
  if (!primitives) {
    const require = createRequire(import.meta.url);
    primitives = {
      mime: require('nodemailer/lib/mime-funcs') as MimeFuncs,
      qp: require('nodemailer/lib/qp') as Encoder,
      base64: require('nodemailer/lib/base64') as Encoder,
    };
  }
  return primitives;
}

const CRLF = '\r\n';
/** RFC 5322 2.1.1: a line SHOULD stay within 78 characters, MUST within 998. */
const LINE_SHOULD = 76;
const LINE_MUST = 998;
/** Encoded words are cut to this many characters of payload, as nodemailer does. */
const WORD_MAX = 52;
// Controls (CR and LF first of all) have no place in a header value, encoded or not.
const CONTROL = /[\u0000-\u001f\u007f]/;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/** Thrown for a header value that would break the message (a line break, a bad address). */
export class MailHeaderError extends Error {
  override readonly name = 'MailHeaderError';
  /** The mail itself cannot be written: trying again cannot help (mail/errors.ts). */
  readonly code = 'EHEADER';
}

function checked(name: string, value: string): string {
  if (CONTROL.test(value)) throw new MailHeaderError(`mail header ${name} carries a control character (a line break would start another header)`);
  return value;
}

/**
 * An address as it goes into a header and the SMTP envelope: one `local@domain` of printable
 * ASCII without spaces or list and angle-bracket characters, the domain in its ASCII (punycode)
 * form (an ASCII domain is kept as written). Anything else is refused rather than guessed at.
 */
export function headerAddress(name: string, address: string): string {
  checked(name, address);
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const written = address.slice(at + 1);
  const domain = /^[\x21-\x7e]*$/.test(written) ? written : domainToASCII(written);
  const ascii = `${local}@${domain}`;
  // The domain: a host name, or an address literal (MAIL_FROM's default for a BASE_URL like http://[::1]:8080).
  if (at <= 0 || domain === '' || !/^[!#-'*+\-/-9=?A-Z^-~.]+@(?:[A-Za-z0-9_.-]+|\[[A-Za-z0-9:.]+\])$/.test(ascii)) {
    throw new MailHeaderError(`mail header ${name} is not a plain local@domain address`);
  }
  return ascii;
}

/** The SMTP envelope of a mail: its From and its one recipient, as the headers name them. */
export function mailEnvelope(mail: Pick<OutgoingMail, 'from' | 'to'>): { from: string; to: string[] } {
  return { from: headerAddress('From', mail.from), to: [headerAddress('To', mail.to)] };
}

/** nodemailer's rule for encoded words: Q when Latin letters outnumber the rest, else B. */
function wordEncoding(value: string): 'Q' | 'B' {
  const other = value.match(/[\x00-\x08\x0b\x0c\x0e-\x1f\u0080-\uffff]/g)?.length ?? 0;
  const latin = value.match(/[a-z]/gi)?.length ?? 0;
  return other < latin ? 'Q' : 'B';
}

function longestLine(folded: string): number {
  let longest = 0;
  for (const line of folded.split(CRLF)) longest = Math.max(longest, line.length);
  return longest;
}

/**
 * `Subject: …`, folded at spaces within 76 characters where it can be. Plain ASCII goes as
 * written unless it contains `=?` (text that would read as an RFC 2047 encoded word: agent text
 * must not decode into anything) or a word too long to fold under 998; then, like any
 * non-ASCII subject, it goes as encoded words, which can be cut anywhere.
 */
function subjectHeader(p: Primitives, subject: string): string {
  checked('Subject', subject);
  if (p.mime.isPlainText(subject) && !subject.includes('=?')) {
    const folded = p.mime.foldLines(`Subject: ${subject}`, LINE_SHOULD);
    if (longestLine(folded) <= LINE_MUST) return folded;
  }
  const words = p.mime.isPlainText(subject) ? p.mime.encodeWord(subject, 'Q', WORD_MAX) : p.mime.encodeWords(subject, wordEncoding(subject), WORD_MAX, true);
  return p.mime.foldLines(`Subject: ${words}`, LINE_SHOULD);
}

/** A Message-ID value `<…>`, brackets added when missing. */
function messageIdValue(name: string, value: string): string {
  const bare = checked(name, value).trim().replace(/^<|>$/g, '');
  if (!/^[^\s<>]+$/.test(bare)) throw new MailHeaderError(`mail header ${name} is not a message id`);
  return `<${bare}>`;
}

/** RFC 5322 3.3 date-time in UTC: `Sun, 10 Mar 2030 10:00:00 +0000`. */
function dateValue(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new MailHeaderError('mail header Date is not a date');
  return date.toUTCString().replace('GMT', '+0000');
}

/** Every line break (CRLF, LF or a lone CR) as CRLF: the only one a message may carry. */
function crlf(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n|\r|\n/g, CRLF) : text.replace(/\n/g, CRLF);
}

interface Part {
  /** Its Content-* header lines, CRLF-joined. */
  headers: string;
  body: string;
  /** True when the body goes as written (7bit): the one kind of body a boundary could be found in. */
  verbatim: boolean;
}

/** True when a line of CRLF-separated text is longer than `max` (nodemailer's hasLongerLines is a regex 10× slower). */
function hasLineOver(content: string, max: number): boolean {
  let start = 0;
  for (let end = content.indexOf(CRLF); end >= 0; end = content.indexOf(CRLF, start)) {
    if (end - start > max) return true;
    start = end + 2;
  }
  return content.length - start > max;
}

/** A line quoted-printable leaves as it is: printable ASCII but `=`, no space at its end, 76 at most. */
const QP_AS_IS = /^(?:[\t\x20-\x3c\x3e-\x7e]{0,75}[\x21-\x3c\x3e-\x7e])?$/;

/**
 * Quoted-printable, line by line: nodemailer's encoder (a character at a time, ~20 ns each) runs
 * only on the lines that need it, so a mostly-ASCII text with a few accents costs a few µs.
 */
function quotedPrintable(p: Primitives, content: string): string {
  return content
    .split(CRLF)
    .map((line) => (QP_AS_IS.test(line) ? line : p.qp.wrap(p.qp.encode(line), LINE_SHOULD)))
    .join(CRLF);
}

function textPart(p: Primitives, subtype: 'plain' | 'html', text: string): Part {
  const content = crlf(text);
  const type = `Content-Type: text/${subtype}; charset=utf-8`;
  if (p.mime.isPlainText(content) && !hasLineOver(content, LINE_MUST)) {
    return { headers: `${type}${CRLF}Content-Transfer-Encoding: 7bit`, body: content, verbatim: true };
  }
  const qp = quotedPrintable(p, content);
  // base64 is 4 characters per 3 bytes and a line break per 76: shorter for mostly non-Latin text.
  const bytes = Buffer.byteLength(content);
  const base64Length = Math.ceil(bytes / 3) * 4 * (1 + 2 / LINE_SHOULD);
  if (base64Length < qp.length) {
    return { headers: `${type}${CRLF}Content-Transfer-Encoding: base64`, body: p.base64.wrap(p.base64.encode(content), LINE_SHOULD), verbatim: false };
  }
  return { headers: `${type}${CRLF}Content-Transfer-Encoding: quoted-printable`, body: qp, verbatim: false };
}

/**
 * One file, base64. Its name as nodemailer writes it: RFC 2231 `filename*` parameters in
 * Content-Disposition when not plain ASCII (or long), and an encoded-word `name` in
 * Content-Type for the clients that read only that. Stored names cannot hold `?` (safeFileName);
 * the split is for any other caller.
 */
function attachmentPart(p: Primitives, file: MailAttachment): Part {
  // Readers decode encoded words even inside an RFC 2231 value: `=?` is split, as headerText does.
  const filename = checked('Content-Disposition', file.filename).replace(/=\?/g, '= ?');
  const type = MEDIA_TYPE.test(file.contentType) ? file.contentType.toLowerCase() : 'application/octet-stream';
  let name = p.mime.encodeWords(filename, wordEncoding(filename), WORD_MAX, true);
  if (name !== filename || /[\s'"\\;:/=(),<>@[\]?]|^-/.test(name)) name = `"${name}"`;
  const disposition = p.mime.buildHeaderValue({ value: 'attachment', params: { filename } });
  return {
    headers: [
      p.mime.foldLines(`Content-Type: ${type}; name=${name}`, LINE_SHOULD),
      'Content-Transfer-Encoding: base64',
      p.mime.foldLines(`Content-Disposition: ${disposition}`, LINE_SHOULD),
    ].join(CRLF),
    body: p.base64.wrap(p.base64.encode(file.content), LINE_SHOULD),
    verbatim: false,
  };
}

function multipart(subtype: 'alternative' | 'mixed', boundary: string, parts: Part[]): Part {
  let body = '';
  for (const part of parts) body += `--${boundary}${CRLF}${part.headers}${CRLF}${CRLF}${part.body}${CRLF}`;
  return { headers: `Content-Type: multipart/${subtype};${CRLF} boundary="${boundary}"`, body: `${body}--${boundary}--`, verbatim: false };
}

/**
 * A boundary prefix found in none of the verbatim parts. `=_` cannot occur in quoted-printable
 * or base64 text, and the random part is drawn after the content is fixed; the check makes the
 * rest certain.
 */
function boundaryFor(parts: Part[]): string {
  for (;;) {
    const boundary = `=_hts_${randomUUID().replace(/-/g, '')}`;
    if (!parts.some((part) => part.verbatim && part.body.includes(boundary))) return boundary;
  }
}

/** The complete message, CRLF line endings, ASCII only (every non-ASCII byte is encoded). */
export function composeMail(mail: OutgoingMail): Buffer {
  const p = load();
  const envelope = mailEnvelope(mail);
  const from = envelope.from;
  const domain = from.slice(from.lastIndexOf('@') + 1);
  const headers = [`From: ${from}`, `To: ${envelope.to[0]}`];
  if (mail.replyTo) headers.push(`Reply-To: ${headerAddress('Reply-To', mail.replyTo)}`);
  headers.push(subjectHeader(p, mail.subject), `Message-ID: ${messageIdValue('Message-ID', `${mail.id}@${domain}`)}`);
  if (mail.inReplyTo) {
    const answered = messageIdValue('In-Reply-To', mail.inReplyTo);
    headers.push(`In-Reply-To: ${answered}`, `References: ${answered}`);
  }
  headers.push(`Date: ${dateValue(mail.createdAt)}`, 'MIME-Version: 1.0');

  const texts = [textPart(p, 'plain', mail.text)];
  if (mail.html) texts.push(textPart(p, 'html', mail.html));
  const files = (mail.attachments ?? []).map((file) => attachmentPart(p, file));
  let root: Part = texts[0] as Part;
  if (texts.length > 1 || files.length > 0) {
    const boundary = boundaryFor(texts);
    if (texts.length > 1) root = multipart('alternative', `${boundary}_a`, texts);
    if (files.length > 0) root = multipart('mixed', `${boundary}_m`, [root, ...files]);
  }
  const end = root.body.endsWith(CRLF) ? '' : CRLF;
  return Buffer.from(`${headers.join(CRLF)}${CRLF}${root.headers}${CRLF}${CRLF}${root.body}${end}`, 'latin1');
}
